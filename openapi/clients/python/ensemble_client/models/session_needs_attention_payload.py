from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.interaction_kind import InteractionKind






T = TypeVar("T", bound="SessionNeedsAttentionPayload")



@_attrs_define
class SessionNeedsAttentionPayload:
    """ An interaction waiting for an answer longer than the server's attention delay.

        Attributes:
            kind (InteractionKind):
            request_id (str):
            requested_at_ms (int): When the interaction was asked (unix ms).
            title (str):
     """

    kind: InteractionKind
    request_id: str
    requested_at_ms: int
    title: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        request_id = self.request_id

        requested_at_ms = self.requested_at_ms

        title = self.title


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "kind": kind,
            "requestId": request_id,
            "requestedAtMs": requested_at_ms,
            "title": title,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = InteractionKind(d.pop("kind"))




        request_id = d.pop("requestId")

        requested_at_ms = d.pop("requestedAtMs")

        title = d.pop("title")

        session_needs_attention_payload = cls(
            kind=kind,
            request_id=request_id,
            requested_at_ms=requested_at_ms,
            title=title,
        )


        session_needs_attention_payload.additional_properties = d
        return session_needs_attention_payload

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
