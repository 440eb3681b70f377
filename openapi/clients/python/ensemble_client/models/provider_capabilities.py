from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset






T = TypeVar("T", bound="ProviderCapabilities")



@_attrs_define
class ProviderCapabilities:
    """ What a provider can do (`GET /v1/providers`).

        Attributes:
            goals (bool):
            interactive (bool):
            resume (bool):
            side_conversations (bool):
            steer (bool):
            config (bool | Unset): Modes and config options can be changed (`PATCH …/config`).
     """

    goals: bool
    interactive: bool
    resume: bool
    side_conversations: bool
    steer: bool
    config: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        goals = self.goals

        interactive = self.interactive

        resume = self.resume

        side_conversations = self.side_conversations

        steer = self.steer

        config = self.config


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "goals": goals,
            "interactive": interactive,
            "resume": resume,
            "sideConversations": side_conversations,
            "steer": steer,
        })
        if config is not UNSET:
            field_dict["config"] = config

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        goals = d.pop("goals")

        interactive = d.pop("interactive")

        resume = d.pop("resume")

        side_conversations = d.pop("sideConversations")

        steer = d.pop("steer")

        config = d.pop("config", UNSET)

        provider_capabilities = cls(
            goals=goals,
            interactive=interactive,
            resume=resume,
            side_conversations=side_conversations,
            steer=steer,
            config=config,
        )


        provider_capabilities.additional_properties = d
        return provider_capabilities

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
