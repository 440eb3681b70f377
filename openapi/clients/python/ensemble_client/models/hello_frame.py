from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.hello_frame_type import HelloFrameType
from ..models.role import Role
from typing import cast

if TYPE_CHECKING:
  from ..models.session import Session





T = TypeVar("T", bound="HelloFrame")



@_attrs_define
class HelloFrame:
    """ First frame: the room's head, its sessions and its open side conversations. Bounded by
    `--max-event-bytes` like every frame: what does not fit is left out and `sessionsTruncated`
    is true (read the lists over REST then).

        Attributes:
            head_seq (int):
            role (Role): What a token may do; each role may do everything the ones before it may.
            room_id (str):
            sessions (list[Session]): The room's canonical sessions, oldest first.
            sessions_truncated (bool): Not every session or side fit the frame.
            sides (list[Session]): The room's open side conversations (each with its `sourceSessionId`), oldest first.
            type_ (HelloFrameType):
     """

    head_seq: int
    role: Role
    room_id: str
    sessions: list[Session]
    sessions_truncated: bool
    sides: list[Session]
    type_: HelloFrameType
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.session import Session # noqa: PLC0415
        head_seq = self.head_seq

        role = self.role.value

        room_id = self.room_id

        sessions = []
        for sessions_item_data in self.sessions:
            sessions_item = sessions_item_data.to_dict()
            sessions.append(sessions_item)



        sessions_truncated = self.sessions_truncated

        sides = []
        for sides_item_data in self.sides:
            sides_item = sides_item_data.to_dict()
            sides.append(sides_item)



        type_ = self.type_.value


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "headSeq": head_seq,
            "role": role,
            "roomId": room_id,
            "sessions": sessions,
            "sessionsTruncated": sessions_truncated,
            "sides": sides,
            "type": type_,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.session import Session # noqa: PLC0415
        d = dict(src_dict)
        head_seq = d.pop("headSeq")

        role = Role(d.pop("role"))




        room_id = d.pop("roomId")

        sessions = []
        _sessions = d.pop("sessions")
        for sessions_item_data in (_sessions):
            sessions_item = Session.from_dict(sessions_item_data)



            sessions.append(sessions_item)


        sessions_truncated = d.pop("sessionsTruncated")

        sides = []
        _sides = d.pop("sides")
        for sides_item_data in (_sides):
            sides_item = Session.from_dict(sides_item_data)



            sides.append(sides_item)


        type_ = HelloFrameType(d.pop("type"))




        hello_frame = cls(
            head_seq=head_seq,
            role=role,
            room_id=room_id,
            sessions=sessions,
            sessions_truncated=sessions_truncated,
            sides=sides,
            type_=type_,
        )


        hello_frame.additional_properties = d
        return hello_frame

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
