from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="WebhookInfo")



@_attrs_define
class WebhookInfo:
    """ A webhook, without its secret.

        Attributes:
            created_at_ms (int):
            created_by (str): The name of the token that made it.
            enabled (bool):
            events (list[str]):
            id (str):
            rooms (list[str]): `["*"]`: every room.
            updated_at_ms (int):
            url (str):
            description (None | str | Unset):
     """

    created_at_ms: int
    created_by: str
    enabled: bool
    events: list[str]
    id: str
    rooms: list[str]
    updated_at_ms: int
    url: str
    description: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        created_at_ms = self.created_at_ms

        created_by = self.created_by

        enabled = self.enabled

        events = self.events



        id = self.id

        rooms = self.rooms



        updated_at_ms = self.updated_at_ms

        url = self.url

        description: None | str | Unset
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "createdAtMs": created_at_ms,
            "createdBy": created_by,
            "enabled": enabled,
            "events": events,
            "id": id,
            "rooms": rooms,
            "updatedAtMs": updated_at_ms,
            "url": url,
        })
        if description is not UNSET:
            field_dict["description"] = description

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        created_at_ms = d.pop("createdAtMs")

        created_by = d.pop("createdBy")

        enabled = d.pop("enabled")

        events = cast(list[str], d.pop("events"))


        id = d.pop("id")

        rooms = cast(list[str], d.pop("rooms"))


        updated_at_ms = d.pop("updatedAtMs")

        url = d.pop("url")

        def _parse_description(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        description = _parse_description(d.pop("description", UNSET))


        webhook_info = cls(
            created_at_ms=created_at_ms,
            created_by=created_by,
            enabled=enabled,
            events=events,
            id=id,
            rooms=rooms,
            updated_at_ms=updated_at_ms,
            url=url,
            description=description,
        )


        webhook_info.additional_properties = d
        return webhook_info

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
