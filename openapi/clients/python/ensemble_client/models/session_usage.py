from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.budget import Budget
  from ..models.budget_state import BudgetState
  from ..models.turn_usage import TurnUsage
  from ..models.usage_totals import UsageTotals





T = TypeVar("T", bound="SessionUsage")



@_attrs_define
class SessionUsage:
    """ A session's usage (`GET …/sessions/{id}/usage`).

        Attributes:
            provider (str):
            state (BudgetState): Where a budget stands.
            totals (UsageTotals): Tokens and cost spent (cost where the agent reports it).
            turns (list[TurnUsage]): Its latest turns (at most 200), oldest first.
            budget (Budget | None | Unset):
            model (None | str | Unset):
     """

    provider: str
    state: BudgetState
    totals: UsageTotals
    turns: list[TurnUsage]
    budget: Budget | None | Unset = UNSET
    model: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.budget import Budget # noqa: PLC0415
        from ..models.budget_state import BudgetState # noqa: PLC0415
        from ..models.turn_usage import TurnUsage # noqa: PLC0415
        from ..models.usage_totals import UsageTotals # noqa: PLC0415
        provider = self.provider

        state = self.state.to_dict()

        totals = self.totals.to_dict()

        turns = []
        for turns_item_data in self.turns:
            turns_item = turns_item_data.to_dict()
            turns.append(turns_item)



        budget: dict[str, Any] | None | Unset
        if isinstance(self.budget, Unset):
            budget = UNSET
        elif isinstance(self.budget, Budget):
            budget = self.budget.to_dict()
        else:
            budget = self.budget

        model: None | str | Unset
        if isinstance(self.model, Unset):
            model = UNSET
        else:
            model = self.model


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "provider": provider,
            "state": state,
            "totals": totals,
            "turns": turns,
        })
        if budget is not UNSET:
            field_dict["budget"] = budget
        if model is not UNSET:
            field_dict["model"] = model

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.budget import Budget # noqa: PLC0415
        from ..models.budget_state import BudgetState # noqa: PLC0415
        from ..models.turn_usage import TurnUsage # noqa: PLC0415
        from ..models.usage_totals import UsageTotals # noqa: PLC0415
        d = dict(src_dict)
        provider = d.pop("provider")

        state = BudgetState.from_dict(d.pop("state"))




        totals = UsageTotals.from_dict(d.pop("totals"))




        turns = []
        _turns = d.pop("turns")
        for turns_item_data in (_turns):
            turns_item = TurnUsage.from_dict(turns_item_data)



            turns.append(turns_item)


        def _parse_budget(data: object) -> Budget | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                budget_type_0 = Budget.from_dict(data)



                return budget_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Budget | None | Unset, data)

        budget = _parse_budget(d.pop("budget", UNSET))


        def _parse_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model = _parse_model(d.pop("model", UNSET))


        session_usage = cls(
            provider=provider,
            state=state,
            totals=totals,
            turns=turns,
            budget=budget,
            model=model,
        )


        session_usage.additional_properties = d
        return session_usage

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
