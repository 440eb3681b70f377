from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="Room")



@_attrs_define
class Room:
    """ A room as `GET /v1/rooms` lists it.

        Attributes:
            head_seq (int):
            room_id (str):
            session_count (int):
     """

    head_seq: int
    room_id: str
    session_count: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        head_seq = self.head_seq

        room_id = self.room_id

        session_count = self.session_count


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "headSeq": head_seq,
            "roomId": room_id,
            "sessionCount": session_count,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        head_seq = d.pop("headSeq")

        room_id = d.pop("roomId")

        session_count = d.pop("sessionCount")

        room = cls(
            head_seq=head_seq,
            room_id=room_id,
            session_count=session_count,
        )


        room.additional_properties = d
        return room

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
