from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.agent_option_kind import AgentOptionKind
from ..models.decision import Decision






T = TypeVar("T", bound="AgentOption")



@_attrs_define
class AgentOption:
    """ One choice an agent offers for a permission request.

        Attributes:
            decision (Decision): An answer to an interaction.
            kind (AgentOptionKind): What an agent's option does.
            name (str):
            option_id (str):
     """

    decision: Decision
    kind: AgentOptionKind
    name: str
    option_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        decision = self.decision.value

        kind = self.kind.value

        name = self.name

        option_id = self.option_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "decision": decision,
            "kind": kind,
            "name": name,
            "optionId": option_id,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        decision = Decision(d.pop("decision"))




        kind = AgentOptionKind(d.pop("kind"))




        name = d.pop("name")

        option_id = d.pop("optionId")

        agent_option = cls(
            decision=decision,
            kind=kind,
            name=name,
            option_id=option_id,
        )


        agent_option.additional_properties = d
        return agent_option

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
