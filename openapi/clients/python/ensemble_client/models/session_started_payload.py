from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.session import Session





T = TypeVar("T", bound="SessionStartedPayload")



@_attrs_define
class SessionStartedPayload:
    """ 
        Attributes:
            session (Session): A session as the contract shows it.
            ephemeral (bool | Unset): Set on side conversations: they are never persisted.
     """

    session: Session
    ephemeral: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.session import Session # noqa: PLC0415
        session = self.session.to_dict()

        ephemeral = self.ephemeral


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "session": session,
        })
        if ephemeral is not UNSET:
            field_dict["ephemeral"] = ephemeral

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.session import Session # noqa: PLC0415
        d = dict(src_dict)
        session = Session.from_dict(d.pop("session"))




        ephemeral = d.pop("ephemeral", UNSET)

        session_started_payload = cls(
            session=session,
            ephemeral=ephemeral,
        )


        session_started_payload.additional_properties = d
        return session_started_payload

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
