from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="CreateWebhook")



@_attrs_define
class CreateWebhook:
    """ `POST /v1/webhooks`.

        Attributes:
            events (list[str]): The event types it gets: `session.closed`, `session.failed`, `turn.completed`,
                `turn.failed`, `turn.canceled`, `interaction.requested`, `interaction.resolved`, `session.needs_attention`,
                `budget.exhausted`.
            url (str): Where deliveries are POSTed (http or https; a public address unless the server runs with
                `--webhook-allow-private`).
            description (None | str | Unset):
            enabled (bool | None | Unset): Default true.
            rooms (list[str] | None | Unset): The rooms whose events it gets; omitted or `["*"]`: every room.
            secret (None | str | Unset): The signing secret (16–256 bytes); omitted: one is made, and shown in this answer
                only.
     """

    events: list[str]
    url: str
    description: None | str | Unset = UNSET
    enabled: bool | None | Unset = UNSET
    rooms: list[str] | None | Unset = UNSET
    secret: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        events = self.events



        url = self.url

        description: None | str | Unset
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description

        enabled: bool | None | Unset
        if isinstance(self.enabled, Unset):
            enabled = UNSET
        else:
            enabled = self.enabled

        rooms: list[str] | None | Unset
        if isinstance(self.rooms, Unset):
            rooms = UNSET
        elif isinstance(self.rooms, list):
            rooms = self.rooms


        else:
            rooms = self.rooms

        secret: None | str | Unset
        if isinstance(self.secret, Unset):
            secret = UNSET
        else:
            secret = self.secret


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "events": events,
            "url": url,
        })
        if description is not UNSET:
            field_dict["description"] = description
        if enabled is not UNSET:
            field_dict["enabled"] = enabled
        if rooms is not UNSET:
            field_dict["rooms"] = rooms
        if secret is not UNSET:
            field_dict["secret"] = secret

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        events = cast(list[str], d.pop("events"))


        url = d.pop("url")

        def _parse_description(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        description = _parse_description(d.pop("description", UNSET))


        def _parse_enabled(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        enabled = _parse_enabled(d.pop("enabled", UNSET))


        def _parse_rooms(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                rooms_type_0 = cast(list[str], data)

                return rooms_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        rooms = _parse_rooms(d.pop("rooms", UNSET))


        def _parse_secret(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        secret = _parse_secret(d.pop("secret", UNSET))


        create_webhook = cls(
            events=events,
            url=url,
            description=description,
            enabled=enabled,
            rooms=rooms,
            secret=secret,
        )

        return create_webhook

