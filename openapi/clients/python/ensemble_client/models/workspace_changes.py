from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.changed_file import ChangedFile





T = TypeVar("T", bound="WorkspaceChanges")



@_attrs_define
class WorkspaceChanges:
    """ What changed between two checkpoints (or the session's base and its latest checkpoint).

        Attributes:
            diff (str): The unified diff (of `path` only, when asked), cut at the server's limit.
            files (list[ChangedFile]):
            from_ (str): The commit compared from.
            to (str): The commit compared to.
            truncated (bool): The diff was cut.
     """

    diff: str
    files: list[ChangedFile]
    from_: str
    to: str
    truncated: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.changed_file import ChangedFile # noqa: PLC0415
        diff = self.diff

        files = []
        for files_item_data in self.files:
            files_item = files_item_data.to_dict()
            files.append(files_item)



        from_ = self.from_

        to = self.to

        truncated = self.truncated


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "diff": diff,
            "files": files,
            "from": from_,
            "to": to,
            "truncated": truncated,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.changed_file import ChangedFile # noqa: PLC0415
        d = dict(src_dict)
        diff = d.pop("diff")

        files = []
        _files = d.pop("files")
        for files_item_data in (_files):
            files_item = ChangedFile.from_dict(files_item_data)



            files.append(files_item)


        from_ = d.pop("from")

        to = d.pop("to")

        truncated = d.pop("truncated")

        workspace_changes = cls(
            diff=diff,
            files=files,
            from_=from_,
            to=to,
            truncated=truncated,
        )


        workspace_changes.additional_properties = d
        return workspace_changes

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
