from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.goal import Goal





T = TypeVar("T", bound="GoalUpdatedPayload")



@_attrs_define
class GoalUpdatedPayload:
    """ 
        Attributes:
            goal (Goal): The goal of a session (contract §Goal).
     """

    goal: Goal
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.goal import Goal # noqa: PLC0415
        goal = self.goal.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "goal": goal,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.goal import Goal # noqa: PLC0415
        d = dict(src_dict)
        goal = Goal.from_dict(d.pop("goal"))




        goal_updated_payload = cls(
            goal=goal,
        )


        goal_updated_payload.additional_properties = d
        return goal_updated_payload

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
