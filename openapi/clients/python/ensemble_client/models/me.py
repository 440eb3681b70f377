from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.role import Role
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="Me")



@_attrs_define
class Me:
    """ Who the caller is.

        Attributes:
            name (str):
            role (Role): What a token may do; each role may do everything the ones before it may.
            rooms (list[str]): The rooms the token reaches (`["*"]`: every room).
            token_id (str):
            expires_at_ms (int | None | Unset):
     """

    name: str
    role: Role
    rooms: list[str]
    token_id: str
    expires_at_ms: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        name = self.name

        role = self.role.value

        rooms = self.rooms



        token_id = self.token_id

        expires_at_ms: int | None | Unset
        if isinstance(self.expires_at_ms, Unset):
            expires_at_ms = UNSET
        else:
            expires_at_ms = self.expires_at_ms


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "name": name,
            "role": role,
            "rooms": rooms,
            "tokenId": token_id,
        })
        if expires_at_ms is not UNSET:
            field_dict["expiresAtMs"] = expires_at_ms

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        role = Role(d.pop("role"))




        rooms = cast(list[str], d.pop("rooms"))


        token_id = d.pop("tokenId")

        def _parse_expires_at_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        expires_at_ms = _parse_expires_at_ms(d.pop("expiresAtMs", UNSET))


        me = cls(
            name=name,
            role=role,
            rooms=rooms,
            token_id=token_id,
            expires_at_ms=expires_at_ms,
        )


        me.additional_properties = d
        return me

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
