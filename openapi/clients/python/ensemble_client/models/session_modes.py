from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.mode_info import ModeInfo





T = TypeVar("T", bound="SessionModes")



@_attrs_define
class SessionModes:
    """ The agent's modes (e.g. ACP session modes, codex's collaboration modes): the current one and
    those a client may switch to with `PATCH …/config`.

        Attributes:
            available (list[ModeInfo]):
            current (str):
     """

    available: list[ModeInfo]
    current: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.mode_info import ModeInfo # noqa: PLC0415
        available = []
        for available_item_data in self.available:
            available_item = available_item_data.to_dict()
            available.append(available_item)



        current = self.current


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "available": available,
            "current": current,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.mode_info import ModeInfo # noqa: PLC0415
        d = dict(src_dict)
        available = []
        _available = d.pop("available")
        for available_item_data in (_available):
            available_item = ModeInfo.from_dict(available_item_data)



            available.append(available_item)


        current = d.pop("current")

        session_modes = cls(
            available=available,
            current=current,
        )


        session_modes.additional_properties = d
        return session_modes

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
