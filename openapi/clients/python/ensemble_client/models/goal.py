from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.goal_origin import GoalOrigin
from ..models.goal_status import GoalStatus
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="Goal")



@_attrs_define
class Goal:
    """ The goal of a session (contract §Goal).

        Attributes:
            objective (str):
            operation_id (str):
            origin (GoalOrigin):
            repair_epoch (int):
            revision (int):
            status (GoalStatus):
            updated_at_ms (int):
            token_budget (int | None | Unset):
            tokens_used (int | None | Unset):
     """

    objective: str
    operation_id: str
    origin: GoalOrigin
    repair_epoch: int
    revision: int
    status: GoalStatus
    updated_at_ms: int
    token_budget: int | None | Unset = UNSET
    tokens_used: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        objective = self.objective

        operation_id = self.operation_id

        origin = self.origin.value

        repair_epoch = self.repair_epoch

        revision = self.revision

        status = self.status.value

        updated_at_ms = self.updated_at_ms

        token_budget: int | None | Unset
        if isinstance(self.token_budget, Unset):
            token_budget = UNSET
        else:
            token_budget = self.token_budget

        tokens_used: int | None | Unset
        if isinstance(self.tokens_used, Unset):
            tokens_used = UNSET
        else:
            tokens_used = self.tokens_used


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "objective": objective,
            "operationId": operation_id,
            "origin": origin,
            "repairEpoch": repair_epoch,
            "revision": revision,
            "status": status,
            "updatedAtMs": updated_at_ms,
        })
        if token_budget is not UNSET:
            field_dict["tokenBudget"] = token_budget
        if tokens_used is not UNSET:
            field_dict["tokensUsed"] = tokens_used

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        objective = d.pop("objective")

        operation_id = d.pop("operationId")

        origin = GoalOrigin(d.pop("origin"))




        repair_epoch = d.pop("repairEpoch")

        revision = d.pop("revision")

        status = GoalStatus(d.pop("status"))




        updated_at_ms = d.pop("updatedAtMs")

        def _parse_token_budget(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        token_budget = _parse_token_budget(d.pop("tokenBudget", UNSET))


        def _parse_tokens_used(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        tokens_used = _parse_tokens_used(d.pop("tokensUsed", UNSET))


        goal = cls(
            objective=objective,
            operation_id=operation_id,
            origin=origin,
            repair_epoch=repair_epoch,
            revision=revision,
            status=status,
            updated_at_ms=updated_at_ms,
            token_budget=token_budget,
            tokens_used=tokens_used,
        )


        goal.additional_properties = d
        return goal

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
