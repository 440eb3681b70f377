from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="GoalClearedPayload")



@_attrs_define
class GoalClearedPayload:
    """ 
        Attributes:
            operation_id (str):
            repair_epoch (int):
            revision (int):
     """

    operation_id: str
    repair_epoch: int
    revision: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        operation_id = self.operation_id

        repair_epoch = self.repair_epoch

        revision = self.revision


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "operationId": operation_id,
            "repairEpoch": repair_epoch,
            "revision": revision,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        operation_id = d.pop("operationId")

        repair_epoch = d.pop("repairEpoch")

        revision = d.pop("revision")

        goal_cleared_payload = cls(
            operation_id=operation_id,
            repair_epoch=repair_epoch,
            revision=revision,
        )


        goal_cleared_payload.additional_properties = d
        return goal_cleared_payload

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
