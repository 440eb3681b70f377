from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.workspace_kind import WorkspaceKind
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="SessionWorkspace")



@_attrs_define
class SessionWorkspace:
    """ A session's workspace.

        Attributes:
            checkpoints (bool): Whether the working tree is checkpointed around every turn.
            kind (WorkspaceKind): What kind of workspace a session has.
            base_commit (None | str | Unset): The commit the worktree started from.
            branch (None | str | Unset):
            common_dir (None | str | Unset): The repository's common dir (objects, refs, configuration), as found when it
                started.
            git_dir (None | str | Unset): The work tree's git dir, as found when the session started (the server's git uses
                it,
                never what the work tree's `.git` says later).
            path (None | str | Unset): The top of the work tree the checkpoints take (a worktree's own directory).
            repo (None | str | Unset): The repository: for a worktree the one it was made from; for a dir the work tree's
                top.
     """

    checkpoints: bool
    kind: WorkspaceKind
    base_commit: None | str | Unset = UNSET
    branch: None | str | Unset = UNSET
    common_dir: None | str | Unset = UNSET
    git_dir: None | str | Unset = UNSET
    path: None | str | Unset = UNSET
    repo: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        checkpoints = self.checkpoints

        kind = self.kind.value

        base_commit: None | str | Unset
        if isinstance(self.base_commit, Unset):
            base_commit = UNSET
        else:
            base_commit = self.base_commit

        branch: None | str | Unset
        if isinstance(self.branch, Unset):
            branch = UNSET
        else:
            branch = self.branch

        common_dir: None | str | Unset
        if isinstance(self.common_dir, Unset):
            common_dir = UNSET
        else:
            common_dir = self.common_dir

        git_dir: None | str | Unset
        if isinstance(self.git_dir, Unset):
            git_dir = UNSET
        else:
            git_dir = self.git_dir

        path: None | str | Unset
        if isinstance(self.path, Unset):
            path = UNSET
        else:
            path = self.path

        repo: None | str | Unset
        if isinstance(self.repo, Unset):
            repo = UNSET
        else:
            repo = self.repo


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "checkpoints": checkpoints,
            "kind": kind,
        })
        if base_commit is not UNSET:
            field_dict["baseCommit"] = base_commit
        if branch is not UNSET:
            field_dict["branch"] = branch
        if common_dir is not UNSET:
            field_dict["commonDir"] = common_dir
        if git_dir is not UNSET:
            field_dict["gitDir"] = git_dir
        if path is not UNSET:
            field_dict["path"] = path
        if repo is not UNSET:
            field_dict["repo"] = repo

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        checkpoints = d.pop("checkpoints")

        kind = WorkspaceKind(d.pop("kind"))




        def _parse_base_commit(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        base_commit = _parse_base_commit(d.pop("baseCommit", UNSET))


        def _parse_branch(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        branch = _parse_branch(d.pop("branch", UNSET))


        def _parse_common_dir(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        common_dir = _parse_common_dir(d.pop("commonDir", UNSET))


        def _parse_git_dir(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        git_dir = _parse_git_dir(d.pop("gitDir", UNSET))


        def _parse_path(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        path = _parse_path(d.pop("path", UNSET))


        def _parse_repo(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        repo = _parse_repo(d.pop("repo", UNSET))


        session_workspace = cls(
            checkpoints=checkpoints,
            kind=kind,
            base_commit=base_commit,
            branch=branch,
            common_dir=common_dir,
            git_dir=git_dir,
            path=path,
            repo=repo,
        )


        session_workspace.additional_properties = d
        return session_workspace

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
