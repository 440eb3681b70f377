from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.auth_state import AuthState
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.agent_info import AgentInfo
  from ..models.provider_capabilities import ProviderCapabilities
  from ..models.provider_isolation import ProviderIsolation





T = TypeVar("T", bound="ProviderInfo")



@_attrs_define
class ProviderInfo:
    """ 
        Attributes:
            available (bool):
            capabilities (ProviderCapabilities): What a provider can do (`GET /v1/providers`).
            display_name (str):
            id (str):
            agent (AgentInfo | None | Unset):
            auth_message (None | str | Unset): How to log in, when `authState` is `auth_required`.
            auth_state (AuthState | None | Unset):
            default (bool | Unset): The provider of sessions started without one (`--default-provider`).
            isolation (None | ProviderIsolation | Unset):
            login_command (None | str | Unset): The command that logs in, when the message names one.
            unavailable_reason (None | str | Unset):
     """

    available: bool
    capabilities: ProviderCapabilities
    display_name: str
    id: str
    agent: AgentInfo | None | Unset = UNSET
    auth_message: None | str | Unset = UNSET
    auth_state: AuthState | None | Unset = UNSET
    default: bool | Unset = UNSET
    isolation: None | ProviderIsolation | Unset = UNSET
    login_command: None | str | Unset = UNSET
    unavailable_reason: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.agent_info import AgentInfo # noqa: PLC0415
        from ..models.provider_capabilities import ProviderCapabilities # noqa: PLC0415
        from ..models.provider_isolation import ProviderIsolation # noqa: PLC0415
        available = self.available

        capabilities = self.capabilities.to_dict()

        display_name = self.display_name

        id = self.id

        agent: dict[str, Any] | None | Unset
        if isinstance(self.agent, Unset):
            agent = UNSET
        elif isinstance(self.agent, AgentInfo):
            agent = self.agent.to_dict()
        else:
            agent = self.agent

        auth_message: None | str | Unset
        if isinstance(self.auth_message, Unset):
            auth_message = UNSET
        else:
            auth_message = self.auth_message

        auth_state: None | str | Unset
        if isinstance(self.auth_state, Unset):
            auth_state = UNSET
        elif isinstance(self.auth_state, AuthState):
            auth_state = self.auth_state.value
        else:
            auth_state = self.auth_state

        default = self.default

        isolation: dict[str, Any] | None | Unset
        if isinstance(self.isolation, Unset):
            isolation = UNSET
        elif isinstance(self.isolation, ProviderIsolation):
            isolation = self.isolation.to_dict()
        else:
            isolation = self.isolation

        login_command: None | str | Unset
        if isinstance(self.login_command, Unset):
            login_command = UNSET
        else:
            login_command = self.login_command

        unavailable_reason: None | str | Unset
        if isinstance(self.unavailable_reason, Unset):
            unavailable_reason = UNSET
        else:
            unavailable_reason = self.unavailable_reason


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "available": available,
            "capabilities": capabilities,
            "displayName": display_name,
            "id": id,
        })
        if agent is not UNSET:
            field_dict["agent"] = agent
        if auth_message is not UNSET:
            field_dict["authMessage"] = auth_message
        if auth_state is not UNSET:
            field_dict["authState"] = auth_state
        if default is not UNSET:
            field_dict["default"] = default
        if isolation is not UNSET:
            field_dict["isolation"] = isolation
        if login_command is not UNSET:
            field_dict["loginCommand"] = login_command
        if unavailable_reason is not UNSET:
            field_dict["unavailableReason"] = unavailable_reason

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.agent_info import AgentInfo # noqa: PLC0415
        from ..models.provider_capabilities import ProviderCapabilities # noqa: PLC0415
        from ..models.provider_isolation import ProviderIsolation # noqa: PLC0415
        d = dict(src_dict)
        available = d.pop("available")

        capabilities = ProviderCapabilities.from_dict(d.pop("capabilities"))




        display_name = d.pop("displayName")

        id = d.pop("id")

        def _parse_agent(data: object) -> AgentInfo | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                agent_type_0 = AgentInfo.from_dict(data)



                return agent_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AgentInfo | None | Unset, data)

        agent = _parse_agent(d.pop("agent", UNSET))


        def _parse_auth_message(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        auth_message = _parse_auth_message(d.pop("authMessage", UNSET))


        def _parse_auth_state(data: object) -> AuthState | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                auth_state_type_0 = AuthState(data)



                return auth_state_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AuthState | None | Unset, data)

        auth_state = _parse_auth_state(d.pop("authState", UNSET))


        default = d.pop("default", UNSET)

        def _parse_isolation(data: object) -> None | ProviderIsolation | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                isolation_type_0 = ProviderIsolation.from_dict(data)



                return isolation_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ProviderIsolation | Unset, data)

        isolation = _parse_isolation(d.pop("isolation", UNSET))


        def _parse_login_command(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        login_command = _parse_login_command(d.pop("loginCommand", UNSET))


        def _parse_unavailable_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        unavailable_reason = _parse_unavailable_reason(d.pop("unavailableReason", UNSET))


        provider_info = cls(
            available=available,
            capabilities=capabilities,
            display_name=display_name,
            id=id,
            agent=agent,
            auth_message=auth_message,
            auth_state=auth_state,
            default=default,
            isolation=isolation,
            login_command=login_command,
            unavailable_reason=unavailable_reason,
        )


        provider_info.additional_properties = d
        return provider_info

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
