from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="GoalReconcileRequiredPayload")



@_attrs_define
class GoalReconcileRequiredPayload:
    """ 
        Attributes:
            reason (str): Why the goal needs reconciling, e.g. `unproven_continuation`.
            operation_id (None | str | Unset):
            provider_turn_id (None | str | Unset):
     """

    reason: str
    operation_id: None | str | Unset = UNSET
    provider_turn_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        reason = self.reason

        operation_id: None | str | Unset
        if isinstance(self.operation_id, Unset):
            operation_id = UNSET
        else:
            operation_id = self.operation_id

        provider_turn_id: None | str | Unset
        if isinstance(self.provider_turn_id, Unset):
            provider_turn_id = UNSET
        else:
            provider_turn_id = self.provider_turn_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "reason": reason,
        })
        if operation_id is not UNSET:
            field_dict["operationId"] = operation_id
        if provider_turn_id is not UNSET:
            field_dict["providerTurnId"] = provider_turn_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        reason = d.pop("reason")

        def _parse_operation_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        operation_id = _parse_operation_id(d.pop("operationId", UNSET))


        def _parse_provider_turn_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        provider_turn_id = _parse_provider_turn_id(d.pop("providerTurnId", UNSET))


        goal_reconcile_required_payload = cls(
            reason=reason,
            operation_id=operation_id,
            provider_turn_id=provider_turn_id,
        )


        goal_reconcile_required_payload.additional_properties = d
        return goal_reconcile_required_payload

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
