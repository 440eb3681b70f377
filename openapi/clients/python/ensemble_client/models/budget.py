from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.on_exhausted import OnExhausted
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="Budget")



@_attrs_define
class Budget:
    """ A limit on what a session or a room spends. Tokens count what went in and what came out.

        Attributes:
            max_cost (float | None | Unset): In the agent's currency (the cost its reports carry).
            max_tokens (int | None | Unset):
            on_exhausted (None | OnExhausted | Unset):
     """

    max_cost: float | None | Unset = UNSET
    max_tokens: int | None | Unset = UNSET
    on_exhausted: None | OnExhausted | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        max_cost: float | None | Unset
        if isinstance(self.max_cost, Unset):
            max_cost = UNSET
        else:
            max_cost = self.max_cost

        max_tokens: int | None | Unset
        if isinstance(self.max_tokens, Unset):
            max_tokens = UNSET
        else:
            max_tokens = self.max_tokens

        on_exhausted: None | str | Unset
        if isinstance(self.on_exhausted, Unset):
            on_exhausted = UNSET
        elif isinstance(self.on_exhausted, OnExhausted):
            on_exhausted = self.on_exhausted.value
        else:
            on_exhausted = self.on_exhausted


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if max_cost is not UNSET:
            field_dict["maxCost"] = max_cost
        if max_tokens is not UNSET:
            field_dict["maxTokens"] = max_tokens
        if on_exhausted is not UNSET:
            field_dict["onExhausted"] = on_exhausted

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        def _parse_max_cost(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        max_cost = _parse_max_cost(d.pop("maxCost", UNSET))


        def _parse_max_tokens(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_tokens = _parse_max_tokens(d.pop("maxTokens", UNSET))


        def _parse_on_exhausted(data: object) -> None | OnExhausted | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                on_exhausted_type_0 = OnExhausted(data)



                return on_exhausted_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | OnExhausted | Unset, data)

        on_exhausted = _parse_on_exhausted(d.pop("onExhausted", UNSET))


        budget = cls(
            max_cost=max_cost,
            max_tokens=max_tokens,
            on_exhausted=on_exhausted,
        )

        return budget

