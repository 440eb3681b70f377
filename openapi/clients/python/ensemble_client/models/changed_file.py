from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.change_status import ChangeStatus
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="ChangedFile")



@_attrs_define
class ChangedFile:
    """ One file a turn (or a range of checkpoints) changed.

        Attributes:
            added (int):
            path (str): Relative to the work tree's top.
            removed (int):
            status (ChangeStatus): How a file changed between two checkpoints.
            binary (bool | Unset): A binary file (no line counts).
            old_path (None | str | Unset): A renamed file's path before.
     """

    added: int
    path: str
    removed: int
    status: ChangeStatus
    binary: bool | Unset = UNSET
    old_path: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        added = self.added

        path = self.path

        removed = self.removed

        status = self.status.value

        binary = self.binary

        old_path: None | str | Unset
        if isinstance(self.old_path, Unset):
            old_path = UNSET
        else:
            old_path = self.old_path


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "added": added,
            "path": path,
            "removed": removed,
            "status": status,
        })
        if binary is not UNSET:
            field_dict["binary"] = binary
        if old_path is not UNSET:
            field_dict["oldPath"] = old_path

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        added = d.pop("added")

        path = d.pop("path")

        removed = d.pop("removed")

        status = ChangeStatus(d.pop("status"))




        binary = d.pop("binary", UNSET)

        def _parse_old_path(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        old_path = _parse_old_path(d.pop("oldPath", UNSET))


        changed_file = cls(
            added=added,
            path=path,
            removed=removed,
            status=status,
            binary=binary,
            old_path=old_path,
        )


        changed_file.additional_properties = d
        return changed_file

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
