from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.resync_frame_type import ResyncFrameType






T = TypeVar("T", bound="ResyncFrame")



@_attrs_define
class ResyncFrame:
    """ History the client asked for is gone, or it fell too far behind: reload over REST and
    reconnect. The connection closes after this frame.

        Attributes:
            head_seq (int):
            reason (str):
            type_ (ResyncFrameType):
     """

    head_seq: int
    reason: str
    type_: ResyncFrameType
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        head_seq = self.head_seq

        reason = self.reason

        type_ = self.type_.value


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "headSeq": head_seq,
            "reason": reason,
            "type": type_,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        head_seq = d.pop("headSeq")

        reason = d.pop("reason")

        type_ = ResyncFrameType(d.pop("type"))




        resync_frame = cls(
            head_seq=head_seq,
            reason=reason,
            type_=type_,
        )


        resync_frame.additional_properties = d
        return resync_frame

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
