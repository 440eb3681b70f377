from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.usage_totals import UsageTotals





T = TypeVar("T", bound="ProviderUsage")



@_attrs_define
class ProviderUsage:
    """ What one provider and model spent in a room.

        Attributes:
            provider (str):
            usage (UsageTotals): Tokens and cost spent (cost where the agent reports it).
            model (None | str | Unset):
     """

    provider: str
    usage: UsageTotals
    model: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.usage_totals import UsageTotals # noqa: PLC0415
        provider = self.provider

        usage = self.usage.to_dict()

        model: None | str | Unset
        if isinstance(self.model, Unset):
            model = UNSET
        else:
            model = self.model


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "provider": provider,
            "usage": usage,
        })
        if model is not UNSET:
            field_dict["model"] = model

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.usage_totals import UsageTotals # noqa: PLC0415
        d = dict(src_dict)
        provider = d.pop("provider")

        usage = UsageTotals.from_dict(d.pop("usage"))




        def _parse_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model = _parse_model(d.pop("model", UNSET))


        provider_usage = cls(
            provider=provider,
            usage=usage,
            model=model,
        )


        provider_usage.additional_properties = d
        return provider_usage

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
