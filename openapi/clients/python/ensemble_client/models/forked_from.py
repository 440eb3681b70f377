from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="ForkedFrom")



@_attrs_define
class ForkedFrom:
    """ A fork's lineage.

        Attributes:
            checkpoint (str): The checkpoint (after that turn) its workspace starts from.
            session_id (str):
            turn_id (str): The source's turn the fork goes through.
     """

    checkpoint: str
    session_id: str
    turn_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        checkpoint = self.checkpoint

        session_id = self.session_id

        turn_id = self.turn_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "checkpoint": checkpoint,
            "sessionId": session_id,
            "turnId": turn_id,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        checkpoint = d.pop("checkpoint")

        session_id = d.pop("sessionId")

        turn_id = d.pop("turnId")

        forked_from = cls(
            checkpoint=checkpoint,
            session_id=session_id,
            turn_id=turn_id,
        )


        forked_from.additional_properties = d
        return forked_from

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
