from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.role import Role
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="CreateToken")



@_attrs_define
class CreateToken:
    """ `POST /v1/tokens`.

        Attributes:
            name (str): Who or what holds it (shown as the actor of what it does), 1–128 characters.
            role (Role): What a token may do; each role may do everything the ones before it may.
            rooms (list[str]): The room ids it reaches, or `["*"]` for every room.
            expires_at_ms (int | None | Unset): When it stops working (milliseconds since the epoch); at most one of this
                and `ttlSecs`.
            ttl_secs (int | None | Unset): How long it works from now, in seconds.
     """

    name: str
    role: Role
    rooms: list[str]
    expires_at_ms: int | None | Unset = UNSET
    ttl_secs: int | None | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        name = self.name

        role = self.role.value

        rooms = self.rooms



        expires_at_ms: int | None | Unset
        if isinstance(self.expires_at_ms, Unset):
            expires_at_ms = UNSET
        else:
            expires_at_ms = self.expires_at_ms

        ttl_secs: int | None | Unset
        if isinstance(self.ttl_secs, Unset):
            ttl_secs = UNSET
        else:
            ttl_secs = self.ttl_secs


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "name": name,
            "role": role,
            "rooms": rooms,
        })
        if expires_at_ms is not UNSET:
            field_dict["expiresAtMs"] = expires_at_ms
        if ttl_secs is not UNSET:
            field_dict["ttlSecs"] = ttl_secs

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        role = Role(d.pop("role"))




        rooms = cast(list[str], d.pop("rooms"))


        def _parse_expires_at_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        expires_at_ms = _parse_expires_at_ms(d.pop("expiresAtMs", UNSET))


        def _parse_ttl_secs(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        ttl_secs = _parse_ttl_secs(d.pop("ttlSecs", UNSET))


        create_token = cls(
            name=name,
            role=role,
            rooms=rooms,
            expires_at_ms=expires_at_ms,
            ttl_secs=ttl_secs,
        )

        return create_token

