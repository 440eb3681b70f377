from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="SideCapabilities")



@_attrs_define
class SideCapabilities:
    """ The side-conversation capabilities of the live adapter behind one session. A side can only be
    opened when all five hold; a provider name alone never implies them.

        Attributes:
            active_source_turn (bool): It can fork a source whose turn is still running.
            ephemeral (bool): The fork is not durable.
            hide_inherited_turns (bool): Inherited turns are visible to the model but are not side history.
            model_boundary_injected (bool): An explicit boundary, visible to the model, separates inherited context from
                side input.
            supported (bool): The exact live runtime behind the session supports side conversations.
     """

    active_source_turn: bool
    ephemeral: bool
    hide_inherited_turns: bool
    model_boundary_injected: bool
    supported: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        active_source_turn = self.active_source_turn

        ephemeral = self.ephemeral

        hide_inherited_turns = self.hide_inherited_turns

        model_boundary_injected = self.model_boundary_injected

        supported = self.supported


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "activeSourceTurn": active_source_turn,
            "ephemeral": ephemeral,
            "hideInheritedTurns": hide_inherited_turns,
            "modelBoundaryInjected": model_boundary_injected,
            "supported": supported,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        active_source_turn = d.pop("activeSourceTurn")

        ephemeral = d.pop("ephemeral")

        hide_inherited_turns = d.pop("hideInheritedTurns")

        model_boundary_injected = d.pop("modelBoundaryInjected")

        supported = d.pop("supported")

        side_capabilities = cls(
            active_source_turn=active_source_turn,
            ephemeral=ephemeral,
            hide_inherited_turns=hide_inherited_turns,
            model_boundary_injected=model_boundary_injected,
            supported=supported,
        )


        side_capabilities.additional_properties = d
        return side_capabilities

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
