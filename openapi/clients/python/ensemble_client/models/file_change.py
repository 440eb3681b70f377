from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="FileChange")



@_attrs_define
class FileChange:
    """ 
        Attributes:
            kind (str): `add`, `delete` or `update`.
            path (str):
            diff (None | str | Unset):
     """

    kind: str
    path: str
    diff: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        kind = self.kind

        path = self.path

        diff: None | str | Unset
        if isinstance(self.diff, Unset):
            diff = UNSET
        else:
            diff = self.diff


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "kind": kind,
            "path": path,
        })
        if diff is not UNSET:
            field_dict["diff"] = diff

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = d.pop("kind")

        path = d.pop("path")

        def _parse_diff(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        diff = _parse_diff(d.pop("diff", UNSET))


        file_change = cls(
            kind=kind,
            path=path,
            diff=diff,
        )


        file_change.additional_properties = d
        return file_change

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
