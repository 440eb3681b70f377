from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="AuditEntry")



@_attrs_define
class AuditEntry:
    """ One mutating request.

        Attributes:
            at_ms (int):
            method (str):
            route (str): The route template, e.g. `/v1/rooms/{roomId}/sessions`.
            seq (int):
            status (int):
            actor (None | str | Unset):
            code (None | str | Unset): The error code of a refusal.
            room_id (None | str | Unset):
            session_id (None | str | Unset):
            token_id (None | str | Unset): The caller's token id (absent: no valid token).
     """

    at_ms: int
    method: str
    route: str
    seq: int
    status: int
    actor: None | str | Unset = UNSET
    code: None | str | Unset = UNSET
    room_id: None | str | Unset = UNSET
    session_id: None | str | Unset = UNSET
    token_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        at_ms = self.at_ms

        method = self.method

        route = self.route

        seq = self.seq

        status = self.status

        actor: None | str | Unset
        if isinstance(self.actor, Unset):
            actor = UNSET
        else:
            actor = self.actor

        code: None | str | Unset
        if isinstance(self.code, Unset):
            code = UNSET
        else:
            code = self.code

        room_id: None | str | Unset
        if isinstance(self.room_id, Unset):
            room_id = UNSET
        else:
            room_id = self.room_id

        session_id: None | str | Unset
        if isinstance(self.session_id, Unset):
            session_id = UNSET
        else:
            session_id = self.session_id

        token_id: None | str | Unset
        if isinstance(self.token_id, Unset):
            token_id = UNSET
        else:
            token_id = self.token_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "atMs": at_ms,
            "method": method,
            "route": route,
            "seq": seq,
            "status": status,
        })
        if actor is not UNSET:
            field_dict["actor"] = actor
        if code is not UNSET:
            field_dict["code"] = code
        if room_id is not UNSET:
            field_dict["roomId"] = room_id
        if session_id is not UNSET:
            field_dict["sessionId"] = session_id
        if token_id is not UNSET:
            field_dict["tokenId"] = token_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        at_ms = d.pop("atMs")

        method = d.pop("method")

        route = d.pop("route")

        seq = d.pop("seq")

        status = d.pop("status")

        def _parse_actor(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        actor = _parse_actor(d.pop("actor", UNSET))


        def _parse_code(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        code = _parse_code(d.pop("code", UNSET))


        def _parse_room_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        room_id = _parse_room_id(d.pop("roomId", UNSET))


        def _parse_session_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        session_id = _parse_session_id(d.pop("sessionId", UNSET))


        def _parse_token_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        token_id = _parse_token_id(d.pop("tokenId", UNSET))


        audit_entry = cls(
            at_ms=at_ms,
            method=method,
            route=route,
            seq=seq,
            status=status,
            actor=actor,
            code=code,
            room_id=room_id,
            session_id=session_id,
            token_id=token_id,
        )


        audit_entry.additional_properties = d
        return audit_entry

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
