from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="CommandInfo")



@_attrs_define
class CommandInfo:
    """ 
        Attributes:
            description (str):
            name (str):
            input_hint (None | str | Unset):
     """

    description: str
    name: str
    input_hint: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        description = self.description

        name = self.name

        input_hint: None | str | Unset
        if isinstance(self.input_hint, Unset):
            input_hint = UNSET
        else:
            input_hint = self.input_hint


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "description": description,
            "name": name,
        })
        if input_hint is not UNSET:
            field_dict["inputHint"] = input_hint

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        description = d.pop("description")

        name = d.pop("name")

        def _parse_input_hint(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        input_hint = _parse_input_hint(d.pop("inputHint", UNSET))


        command_info = cls(
            description=description,
            name=name,
            input_hint=input_hint,
        )


        command_info.additional_properties = d
        return command_info

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
