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
  from ..models.provider_usage import ProviderUsage
  from ..models.session_usage_line import SessionUsageLine
  from ..models.usage_totals import UsageTotals





T = TypeVar("T", bound="RoomUsage")



@_attrs_define
class RoomUsage:
    """ A room's usage (`GET /v1/rooms/{roomId}/usage`).

        Attributes:
            providers (list[ProviderUsage]): By provider and model.
            sessions (list[SessionUsageLine]): By session.
            state (BudgetState): Where a budget stands.
            totals (UsageTotals): Tokens and cost spent (cost where the agent reports it).
            budget (Budget | None | Unset):
     """

    providers: list[ProviderUsage]
    sessions: list[SessionUsageLine]
    state: BudgetState
    totals: UsageTotals
    budget: Budget | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.budget import Budget # noqa: PLC0415
        from ..models.budget_state import BudgetState # noqa: PLC0415
        from ..models.provider_usage import ProviderUsage # noqa: PLC0415
        from ..models.session_usage_line import SessionUsageLine # noqa: PLC0415
        from ..models.usage_totals import UsageTotals # noqa: PLC0415
        providers = []
        for providers_item_data in self.providers:
            providers_item = providers_item_data.to_dict()
            providers.append(providers_item)



        sessions = []
        for sessions_item_data in self.sessions:
            sessions_item = sessions_item_data.to_dict()
            sessions.append(sessions_item)



        state = self.state.to_dict()

        totals = self.totals.to_dict()

        budget: dict[str, Any] | None | Unset
        if isinstance(self.budget, Unset):
            budget = UNSET
        elif isinstance(self.budget, Budget):
            budget = self.budget.to_dict()
        else:
            budget = self.budget


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "providers": providers,
            "sessions": sessions,
            "state": state,
            "totals": totals,
        })
        if budget is not UNSET:
            field_dict["budget"] = budget

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.budget import Budget # noqa: PLC0415
        from ..models.budget_state import BudgetState # noqa: PLC0415
        from ..models.provider_usage import ProviderUsage # noqa: PLC0415
        from ..models.session_usage_line import SessionUsageLine # noqa: PLC0415
        from ..models.usage_totals import UsageTotals # noqa: PLC0415
        d = dict(src_dict)
        providers = []
        _providers = d.pop("providers")
        for providers_item_data in (_providers):
            providers_item = ProviderUsage.from_dict(providers_item_data)



            providers.append(providers_item)


        sessions = []
        _sessions = d.pop("sessions")
        for sessions_item_data in (_sessions):
            sessions_item = SessionUsageLine.from_dict(sessions_item_data)



            sessions.append(sessions_item)


        state = BudgetState.from_dict(d.pop("state"))




        totals = UsageTotals.from_dict(d.pop("totals"))




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


        room_usage = cls(
            providers=providers,
            sessions=sessions,
            state=state,
            totals=totals,
            budget=budget,
        )


        room_usage.additional_properties = d
        return room_usage

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
