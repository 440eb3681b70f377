from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.network_blocked_event_type import NetworkBlockedEventType
from ..models.scope import Scope
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.actor import Actor
  from ..models.network_blocked_payload import NetworkBlockedPayload





T = TypeVar("T", bound="NetworkBlockedEvent")



@_attrs_define
class NetworkBlockedEvent:
    """ The session's isolated agent tried to reach a host it may not (once a minute per target).

        Attributes:
            event_id (str):
            occurred_at_ms (int):
            payload (NetworkBlockedPayload): `network.blocked`: a connection the egress proxy refused.
            room_id (str):
            scope (Scope): Where a session sits: an ordinary (canonical) session, or an ephemeral side conversation.
            seq (int): Per room (per side session for side events), from 1, gap-free.
            session_id (str):
            type_ (NetworkBlockedEventType):
            actor (Actor | None | Unset):
            turn_id (None | str | Unset):
     """

    event_id: str
    occurred_at_ms: int
    payload: NetworkBlockedPayload
    room_id: str
    scope: Scope
    seq: int
    session_id: str
    type_: NetworkBlockedEventType
    actor: Actor | None | Unset = UNSET
    turn_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.actor import Actor # noqa: PLC0415
        from ..models.network_blocked_payload import NetworkBlockedPayload # noqa: PLC0415
        event_id = self.event_id

        occurred_at_ms = self.occurred_at_ms

        payload = self.payload.to_dict()

        room_id = self.room_id

        scope = self.scope.value

        seq = self.seq

        session_id = self.session_id

        type_ = self.type_.value

        actor: dict[str, Any] | None | Unset
        if isinstance(self.actor, Unset):
            actor = UNSET
        elif isinstance(self.actor, Actor):
            actor = self.actor.to_dict()
        else:
            actor = self.actor

        turn_id: None | str | Unset
        if isinstance(self.turn_id, Unset):
            turn_id = UNSET
        else:
            turn_id = self.turn_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "eventId": event_id,
            "occurredAtMs": occurred_at_ms,
            "payload": payload,
            "roomId": room_id,
            "scope": scope,
            "seq": seq,
            "sessionId": session_id,
            "type": type_,
        })
        if actor is not UNSET:
            field_dict["actor"] = actor
        if turn_id is not UNSET:
            field_dict["turnId"] = turn_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.actor import Actor # noqa: PLC0415
        from ..models.network_blocked_payload import NetworkBlockedPayload # noqa: PLC0415
        d = dict(src_dict)
        event_id = d.pop("eventId")

        occurred_at_ms = d.pop("occurredAtMs")

        payload = NetworkBlockedPayload.from_dict(d.pop("payload"))




        room_id = d.pop("roomId")

        scope = Scope(d.pop("scope"))




        seq = d.pop("seq")

        session_id = d.pop("sessionId")

        type_ = NetworkBlockedEventType(d.pop("type"))




        def _parse_actor(data: object) -> Actor | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                actor_type_0 = Actor.from_dict(data)



                return actor_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Actor | None | Unset, data)

        actor = _parse_actor(d.pop("actor", UNSET))


        def _parse_turn_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        turn_id = _parse_turn_id(d.pop("turnId", UNSET))


        network_blocked_event = cls(
            event_id=event_id,
            occurred_at_ms=occurred_at_ms,
            payload=payload,
            room_id=room_id,
            scope=scope,
            seq=seq,
            session_id=session_id,
            type_=type_,
            actor=actor,
            turn_id=turn_id,
        )


        network_blocked_event.additional_properties = d
        return network_blocked_event

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
