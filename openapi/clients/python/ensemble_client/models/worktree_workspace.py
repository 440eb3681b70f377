from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.worktree_workspace_kind import WorktreeWorkspaceKind
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="WorktreeWorkspace")



@_attrs_define
class WorktreeWorkspace:
    """ A new git worktree of `repo` (which must be inside the workspace roots), on a new branch.

        Attributes:
            kind (WorktreeWorkspaceKind):
            repo (str): Absolute path of the repository.
            base (None | str | Unset): The commit, branch or tag to start from (default: the repository's `HEAD`).
            branch (None | str | Unset): The new branch (default `ensemble/<room>/<session>`).
     """

    kind: WorktreeWorkspaceKind
    repo: str
    base: None | str | Unset = UNSET
    branch: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        repo = self.repo

        base: None | str | Unset
        if isinstance(self.base, Unset):
            base = UNSET
        else:
            base = self.base

        branch: None | str | Unset
        if isinstance(self.branch, Unset):
            branch = UNSET
        else:
            branch = self.branch


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "kind": kind,
            "repo": repo,
        })
        if base is not UNSET:
            field_dict["base"] = base
        if branch is not UNSET:
            field_dict["branch"] = branch

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = WorktreeWorkspaceKind(d.pop("kind"))




        repo = d.pop("repo")

        def _parse_base(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        base = _parse_base(d.pop("base", UNSET))


        def _parse_branch(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        branch = _parse_branch(d.pop("branch", UNSET))


        worktree_workspace = cls(
            kind=kind,
            repo=repo,
            base=base,
            branch=branch,
        )


        worktree_workspace.additional_properties = d
        return worktree_workspace

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
