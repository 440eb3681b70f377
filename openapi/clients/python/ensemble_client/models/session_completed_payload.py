from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.session import Session





T = TypeVar("T", bound="SessionCompletedPayload")



@_attrs_define
class SessionCompletedPayload:
    """ 
        Attributes:
            reason (str):
            session (Session): A session as the contract shows it.
     """

    reason: str
    session: Session
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.session import Session # noqa: PLC0415
        reason = self.reason

        session = self.session.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "reason": reason,
            "session": session,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.session import Session # noqa: PLC0415
        d = dict(src_dict)
        reason = d.pop("reason")

        session = Session.from_dict(d.pop("session"))




        session_completed_payload = cls(
            reason=reason,
            session=session,
        )


        session_completed_payload.additional_properties = d
        return session_completed_payload

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
