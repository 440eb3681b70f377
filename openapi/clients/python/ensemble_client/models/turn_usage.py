from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.usage_totals import UsageTotals





T = TypeVar("T", bound="TurnUsage")



@_attrs_define
class TurnUsage:
    """ What one turn spent.

        Attributes:
            turn_id (str):
            usage (UsageTotals): Tokens and cost spent (cost where the agent reports it).
     """

    turn_id: str
    usage: UsageTotals
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.usage_totals import UsageTotals # noqa: PLC0415
        turn_id = self.turn_id

        usage = self.usage.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "turnId": turn_id,
            "usage": usage,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.usage_totals import UsageTotals # noqa: PLC0415
        d = dict(src_dict)
        turn_id = d.pop("turnId")

        usage = UsageTotals.from_dict(d.pop("usage"))




        turn_usage = cls(
            turn_id=turn_id,
            usage=usage,
        )


        turn_usage.additional_properties = d
        return turn_usage

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
