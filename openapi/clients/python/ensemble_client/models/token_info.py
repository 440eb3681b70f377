from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.role import Role
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="TokenInfo")



@_attrs_define
class TokenInfo:
    """ A managed token, without its secret.

        Attributes:
            active (bool): Neither it nor a token up its chain of makers is revoked or expired.
            created_at_ms (int):
            created_by (str): The name of the token that made it.
            id (str):
            name (str):
            role (Role): What a token may do; each role may do everything the ones before it may.
            rooms (list[str]):
            created_by_id (None | str | Unset): The id of the token that made it (`admin`: the token file's). A token is
                valid only while
                its maker is, and is revoked with it. Absent on tokens made before it was recorded.
            expires_at_ms (int | None | Unset):
            last_used_at_ms (int | None | Unset):
            revoked_at_ms (int | None | Unset):
     """

    active: bool
    created_at_ms: int
    created_by: str
    id: str
    name: str
    role: Role
    rooms: list[str]
    created_by_id: None | str | Unset = UNSET
    expires_at_ms: int | None | Unset = UNSET
    last_used_at_ms: int | None | Unset = UNSET
    revoked_at_ms: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        active = self.active

        created_at_ms = self.created_at_ms

        created_by = self.created_by

        id = self.id

        name = self.name

        role = self.role.value

        rooms = self.rooms



        created_by_id: None | str | Unset
        if isinstance(self.created_by_id, Unset):
            created_by_id = UNSET
        else:
            created_by_id = self.created_by_id

        expires_at_ms: int | None | Unset
        if isinstance(self.expires_at_ms, Unset):
            expires_at_ms = UNSET
        else:
            expires_at_ms = self.expires_at_ms

        last_used_at_ms: int | None | Unset
        if isinstance(self.last_used_at_ms, Unset):
            last_used_at_ms = UNSET
        else:
            last_used_at_ms = self.last_used_at_ms

        revoked_at_ms: int | None | Unset
        if isinstance(self.revoked_at_ms, Unset):
            revoked_at_ms = UNSET
        else:
            revoked_at_ms = self.revoked_at_ms


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "active": active,
            "createdAtMs": created_at_ms,
            "createdBy": created_by,
            "id": id,
            "name": name,
            "role": role,
            "rooms": rooms,
        })
        if created_by_id is not UNSET:
            field_dict["createdById"] = created_by_id
        if expires_at_ms is not UNSET:
            field_dict["expiresAtMs"] = expires_at_ms
        if last_used_at_ms is not UNSET:
            field_dict["lastUsedAtMs"] = last_used_at_ms
        if revoked_at_ms is not UNSET:
            field_dict["revokedAtMs"] = revoked_at_ms

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        active = d.pop("active")

        created_at_ms = d.pop("createdAtMs")

        created_by = d.pop("createdBy")

        id = d.pop("id")

        name = d.pop("name")

        role = Role(d.pop("role"))




        rooms = cast(list[str], d.pop("rooms"))


        def _parse_created_by_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        created_by_id = _parse_created_by_id(d.pop("createdById", UNSET))


        def _parse_expires_at_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        expires_at_ms = _parse_expires_at_ms(d.pop("expiresAtMs", UNSET))


        def _parse_last_used_at_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        last_used_at_ms = _parse_last_used_at_ms(d.pop("lastUsedAtMs", UNSET))


        def _parse_revoked_at_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        revoked_at_ms = _parse_revoked_at_ms(d.pop("revokedAtMs", UNSET))


        token_info = cls(
            active=active,
            created_at_ms=created_at_ms,
            created_by=created_by,
            id=id,
            name=name,
            role=role,
            rooms=rooms,
            created_by_id=created_by_id,
            expires_at_ms=expires_at_ms,
            last_used_at_ms=last_used_at_ms,
            revoked_at_ms=revoked_at_ms,
        )


        token_info.additional_properties = d
        return token_info

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
