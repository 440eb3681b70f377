from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.session import Session
  from ..models.side_capabilities import SideCapabilities





T = TypeVar("T", bound="SideOpened")



@_attrs_define
class SideOpened:
    """ 
        Attributes:
            capabilities (SideCapabilities): The side-conversation capabilities of the live adapter behind one session. A
                side can only be
                opened when all five hold; a provider name alone never implies them.
            session (Session): A session as the contract shows it.
     """

    capabilities: SideCapabilities
    session: Session
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.session import Session # noqa: PLC0415
        from ..models.side_capabilities import SideCapabilities # noqa: PLC0415
        capabilities = self.capabilities.to_dict()

        session = self.session.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "capabilities": capabilities,
            "session": session,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.session import Session # noqa: PLC0415
        from ..models.side_capabilities import SideCapabilities # noqa: PLC0415
        d = dict(src_dict)
        capabilities = SideCapabilities.from_dict(d.pop("capabilities"))




        session = Session.from_dict(d.pop("session"))




        side_opened = cls(
            capabilities=capabilities,
            session=session,
        )


        side_opened.additional_properties = d
        return side_opened

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
