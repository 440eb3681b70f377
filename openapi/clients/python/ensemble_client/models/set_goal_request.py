from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="SetGoalRequest")



@_attrs_define
class SetGoalRequest:
    """ `PUT .../goal`.

        Attributes:
            client_submit_id (str): Idempotency key of the operation (the same value again is the same operation).
            objective (str): What the agent pursues (not blank; at most `--max-input-bytes` bytes).
            token_budget (int | None | Unset):
     """

    client_submit_id: str
    objective: str
    token_budget: int | None | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        client_submit_id = self.client_submit_id

        objective = self.objective

        token_budget: int | None | Unset
        if isinstance(self.token_budget, Unset):
            token_budget = UNSET
        else:
            token_budget = self.token_budget


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "clientSubmitId": client_submit_id,
            "objective": objective,
        })
        if token_budget is not UNSET:
            field_dict["tokenBudget"] = token_budget

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        client_submit_id = d.pop("clientSubmitId")

        objective = d.pop("objective")

        def _parse_token_budget(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        token_budget = _parse_token_budget(d.pop("tokenBudget", UNSET))


        set_goal_request = cls(
            client_submit_id=client_submit_id,
            objective=objective,
            token_budget=token_budget,
        )

        return set_goal_request

