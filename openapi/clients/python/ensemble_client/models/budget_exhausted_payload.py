from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.budget import Budget
  from ..models.budget_state import BudgetState





T = TypeVar("T", bound="BudgetExhaustedPayload")



@_attrs_define
class BudgetExhaustedPayload:
    """ A budget reached.

        Attributes:
            budget (Budget): A limit on what a session or a room spends. Tokens count what went in and what came out.
            scope (str): `session` or `room`.
            state (BudgetState): Where a budget stands.
     """

    budget: Budget
    scope: str
    state: BudgetState
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.budget import Budget # noqa: PLC0415
        from ..models.budget_state import BudgetState # noqa: PLC0415
        budget = self.budget.to_dict()

        scope = self.scope

        state = self.state.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "budget": budget,
            "scope": scope,
            "state": state,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.budget import Budget # noqa: PLC0415
        from ..models.budget_state import BudgetState # noqa: PLC0415
        d = dict(src_dict)
        budget = Budget.from_dict(d.pop("budget"))




        scope = d.pop("scope")

        state = BudgetState.from_dict(d.pop("state"))




        budget_exhausted_payload = cls(
            budget=budget,
            scope=scope,
            state=state,
        )


        budget_exhausted_payload.additional_properties = d
        return budget_exhausted_payload

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
