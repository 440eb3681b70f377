from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.delivery_state import DeliveryState
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.delivery_attempt import DeliveryAttempt





T = TypeVar("T", bound="Delivery")



@_attrs_define
class Delivery:
    """ One event's delivery to a webhook.

        Attributes:
            attempts (int): Attempts made.
            created_at_ms (int):
            event_id (str): The event's id, sent as `Ensemble-Event-Id`: the receiver's idempotency key.
            id (int):
            last_attempts (list[DeliveryAttempt]): The latest attempts (up to 20), oldest first.
            state (DeliveryState): Where a delivery is.
            type_ (str):
            next_attempt_at_ms (int | None | Unset): When a pending delivery is tried next.
            room_id (None | str | Unset):
            session_id (None | str | Unset):
     """

    attempts: int
    created_at_ms: int
    event_id: str
    id: int
    last_attempts: list[DeliveryAttempt]
    state: DeliveryState
    type_: str
    next_attempt_at_ms: int | None | Unset = UNSET
    room_id: None | str | Unset = UNSET
    session_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.delivery_attempt import DeliveryAttempt # noqa: PLC0415
        attempts = self.attempts

        created_at_ms = self.created_at_ms

        event_id = self.event_id

        id = self.id

        last_attempts = []
        for last_attempts_item_data in self.last_attempts:
            last_attempts_item = last_attempts_item_data.to_dict()
            last_attempts.append(last_attempts_item)



        state = self.state.value

        type_ = self.type_

        next_attempt_at_ms: int | None | Unset
        if isinstance(self.next_attempt_at_ms, Unset):
            next_attempt_at_ms = UNSET
        else:
            next_attempt_at_ms = self.next_attempt_at_ms

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


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "attempts": attempts,
            "createdAtMs": created_at_ms,
            "eventId": event_id,
            "id": id,
            "lastAttempts": last_attempts,
            "state": state,
            "type": type_,
        })
        if next_attempt_at_ms is not UNSET:
            field_dict["nextAttemptAtMs"] = next_attempt_at_ms
        if room_id is not UNSET:
            field_dict["roomId"] = room_id
        if session_id is not UNSET:
            field_dict["sessionId"] = session_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.delivery_attempt import DeliveryAttempt # noqa: PLC0415
        d = dict(src_dict)
        attempts = d.pop("attempts")

        created_at_ms = d.pop("createdAtMs")

        event_id = d.pop("eventId")

        id = d.pop("id")

        last_attempts = []
        _last_attempts = d.pop("lastAttempts")
        for last_attempts_item_data in (_last_attempts):
            last_attempts_item = DeliveryAttempt.from_dict(last_attempts_item_data)



            last_attempts.append(last_attempts_item)


        state = DeliveryState(d.pop("state"))




        type_ = d.pop("type")

        def _parse_next_attempt_at_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        next_attempt_at_ms = _parse_next_attempt_at_ms(d.pop("nextAttemptAtMs", UNSET))


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


        delivery = cls(
            attempts=attempts,
            created_at_ms=created_at_ms,
            event_id=event_id,
            id=id,
            last_attempts=last_attempts,
            state=state,
            type_=type_,
            next_attempt_at_ms=next_attempt_at_ms,
            room_id=room_id,
            session_id=session_id,
        )


        delivery.additional_properties = d
        return delivery

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
