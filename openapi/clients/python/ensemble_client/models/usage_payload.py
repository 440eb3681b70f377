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





T = TypeVar("T", bound="UsagePayload")



@_attrs_define
class UsagePayload:
    """ 
        Attributes:
            input_tokens (int):
            output_tokens (int):
            total_tokens (int):
            cached_input_tokens (int | Unset):
            context_window (int | None | Unset):
            cost (Cost | None | Unset):
            last_turn_total_tokens (int | None | Unset): Tokens of the latest turn alone, when the provider reports them.
            reasoning_output_tokens (int | Unset):
     """

    input_tokens: int
    output_tokens: int
    total_tokens: int
    cached_input_tokens: int | Unset = UNSET
    context_window: int | None | Unset = UNSET
    cost: Cost | None | Unset = UNSET
    last_turn_total_tokens: int | None | Unset = UNSET
    reasoning_output_tokens: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.cost import Cost # noqa: PLC0415
        input_tokens = self.input_tokens

        output_tokens = self.output_tokens

        total_tokens = self.total_tokens

        cached_input_tokens = self.cached_input_tokens

        context_window: int | None | Unset
        if isinstance(self.context_window, Unset):
            context_window = UNSET
        else:
            context_window = self.context_window

        cost: dict[str, Any] | None | Unset
        if isinstance(self.cost, Unset):
            cost = UNSET
        elif isinstance(self.cost, Cost):
            cost = self.cost.to_dict()
        else:
            cost = self.cost

        last_turn_total_tokens: int | None | Unset
        if isinstance(self.last_turn_total_tokens, Unset):
            last_turn_total_tokens = UNSET
        else:
            last_turn_total_tokens = self.last_turn_total_tokens

        reasoning_output_tokens = self.reasoning_output_tokens


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "inputTokens": input_tokens,
            "outputTokens": output_tokens,
            "totalTokens": total_tokens,
        })
        if cached_input_tokens is not UNSET:
            field_dict["cachedInputTokens"] = cached_input_tokens
        if context_window is not UNSET:
            field_dict["contextWindow"] = context_window
        if cost is not UNSET:
            field_dict["cost"] = cost
        if last_turn_total_tokens is not UNSET:
            field_dict["lastTurnTotalTokens"] = last_turn_total_tokens
        if reasoning_output_tokens is not UNSET:
            field_dict["reasoningOutputTokens"] = reasoning_output_tokens

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.cost import Cost # noqa: PLC0415
        d = dict(src_dict)
        input_tokens = d.pop("inputTokens")

        output_tokens = d.pop("outputTokens")

        total_tokens = d.pop("totalTokens")

        cached_input_tokens = d.pop("cachedInputTokens", UNSET)

        def _parse_context_window(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        context_window = _parse_context_window(d.pop("contextWindow", UNSET))


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


        def _parse_last_turn_total_tokens(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        last_turn_total_tokens = _parse_last_turn_total_tokens(d.pop("lastTurnTotalTokens", UNSET))


        reasoning_output_tokens = d.pop("reasoningOutputTokens", UNSET)

        usage_payload = cls(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            total_tokens=total_tokens,
            cached_input_tokens=cached_input_tokens,
            context_window=context_window,
            cost=cost,
            last_turn_total_tokens=last_turn_total_tokens,
            reasoning_output_tokens=reasoning_output_tokens,
        )


        usage_payload.additional_properties = d
        return usage_payload

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
