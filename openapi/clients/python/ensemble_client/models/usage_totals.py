from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.cost import Cost





T = TypeVar("T", bound="UsageTotals")



@_attrs_define
class UsageTotals:
    """ Tokens and cost spent (cost where the agent reports it).

        Attributes:
            cached_input_tokens (int): Of the input, what the model had cached.
            input_tokens (int):
            output_tokens (int):
            reasoning_output_tokens (int): Of the output, the model's reasoning.
            cost (Cost | None | Unset):
     """

    cached_input_tokens: int
    input_tokens: int
    output_tokens: int
    reasoning_output_tokens: int
    cost: Cost | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.cost import Cost # noqa: PLC0415
        cached_input_tokens = self.cached_input_tokens

        input_tokens = self.input_tokens

        output_tokens = self.output_tokens

        reasoning_output_tokens = self.reasoning_output_tokens

        cost: dict[str, Any] | None | Unset
        if isinstance(self.cost, Unset):
            cost = UNSET
        elif isinstance(self.cost, Cost):
            cost = self.cost.to_dict()
        else:
            cost = self.cost


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "cachedInputTokens": cached_input_tokens,
            "inputTokens": input_tokens,
            "outputTokens": output_tokens,
            "reasoningOutputTokens": reasoning_output_tokens,
        })
        if cost is not UNSET:
            field_dict["cost"] = cost

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.cost import Cost # noqa: PLC0415
        d = dict(src_dict)
        cached_input_tokens = d.pop("cachedInputTokens")

        input_tokens = d.pop("inputTokens")

        output_tokens = d.pop("outputTokens")

        reasoning_output_tokens = d.pop("reasoningOutputTokens")

        def _parse_cost(data: object) -> Cost | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                cost_type_0 = Cost.from_dict(data)



                return cost_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Cost | None | Unset, data)

        cost = _parse_cost(d.pop("cost", UNSET))


        usage_totals = cls(
            cached_input_tokens=cached_input_tokens,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            reasoning_output_tokens=reasoning_output_tokens,
            cost=cost,
        )


        usage_totals.additional_properties = d
        return usage_totals

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
