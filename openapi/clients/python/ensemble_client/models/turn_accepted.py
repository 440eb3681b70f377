from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="TurnAccepted")



@_attrs_define
class TurnAccepted:
    """ The answer to an accepted submit.

        Attributes:
            duplicate (bool): True when this `clientSubmitId` was seen before and no new turn started.
            queued (bool): True when the turn waits in the session's queue (it starts, as `turnId`, later).
            steered (bool): True when the input was added to the running turn.
            turn_id (str):
     """

    duplicate: bool
    queued: bool
    steered: bool
    turn_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        duplicate = self.duplicate

        queued = self.queued

        steered = self.steered

        turn_id = self.turn_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "duplicate": duplicate,
            "queued": queued,
            "steered": steered,
            "turnId": turn_id,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        duplicate = d.pop("duplicate")

        queued = d.pop("queued")

        steered = d.pop("steered")

        turn_id = d.pop("turnId")

        turn_accepted = cls(
            duplicate=duplicate,
            queued=queued,
            steered=steered,
            turn_id=turn_id,
        )


        turn_accepted.additional_properties = d
        return turn_accepted

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
