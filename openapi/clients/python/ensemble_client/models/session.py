from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.auth_state import AuthState
from ..models.scope import Scope
from ..models.session_status import SessionStatus
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.config_option import ConfigOption
  from ..models.forked_from import ForkedFrom
  from ..models.isolation import Isolation
  from ..models.session_modes import SessionModes
  from ..models.session_settings import SessionSettings
  from ..models.session_workspace import SessionWorkspace
  from ..models.submit_availability import SubmitAvailability





T = TypeVar("T", bound="Session")



@_attrs_define
class Session:
    """ A session as the contract shows it.

        Attributes:
            created_at_ms (int):
            cwd (str):
            live (bool):
            provider (str):
            resumable (bool):
            room_id (str):
            root_session_id (str):
            scope (Scope): Where a session sits: an ordinary (canonical) session, or an ephemeral side conversation.
            session_id (str):
            settings (SessionSettings): Per-session settings, as submitted at start.
            status (SessionStatus): The status clients see, derived from the session's lifecycle, its running turn and its
                pending
                interactions (never set directly).
            submit_availability (SubmitAvailability): Whether a turn may be submitted now, and why not.
            title (str):
            updated_at_ms (int):
            visible (bool):
            active_turn_id (None | str | Unset):
            auth_message (None | str | Unset): How to authenticate when `authState` is `auth_required`.
            auth_state (AuthState | None | Unset):
            config_options (list[ConfigOption] | Unset): The settings a client may change for the next turn (`PATCH
                …/config`).
            forked_from (ForkedFrom | None | Unset):
            isolation (Isolation | None | Unset):
            last_error (None | str | Unset):
            modes (None | SessionModes | Unset):
            provider_session_id (None | str | Unset):
            resume_unsupported_reason (None | str | Unset): Why the session cannot be resumed, when its provider says (e.g.
                an ACP agent without
                `session/load`).
            side_request_id (None | str | Unset):
            source_session_id (None | str | Unset):
            workspace (None | SessionWorkspace | Unset):
     """

    created_at_ms: int
    cwd: str
    live: bool
    provider: str
    resumable: bool
    room_id: str
    root_session_id: str
    scope: Scope
    session_id: str
    settings: SessionSettings
    status: SessionStatus
    submit_availability: SubmitAvailability
    title: str
    updated_at_ms: int
    visible: bool
    active_turn_id: None | str | Unset = UNSET
    auth_message: None | str | Unset = UNSET
    auth_state: AuthState | None | Unset = UNSET
    config_options: list[ConfigOption] | Unset = UNSET
    forked_from: ForkedFrom | None | Unset = UNSET
    isolation: Isolation | None | Unset = UNSET
    last_error: None | str | Unset = UNSET
    modes: None | SessionModes | Unset = UNSET
    provider_session_id: None | str | Unset = UNSET
    resume_unsupported_reason: None | str | Unset = UNSET
    side_request_id: None | str | Unset = UNSET
    source_session_id: None | str | Unset = UNSET
    workspace: None | SessionWorkspace | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.config_option import ConfigOption # noqa: PLC0415
        from ..models.forked_from import ForkedFrom # noqa: PLC0415
        from ..models.isolation import Isolation # noqa: PLC0415
        from ..models.session_modes import SessionModes # noqa: PLC0415
        from ..models.session_settings import SessionSettings # noqa: PLC0415
        from ..models.session_workspace import SessionWorkspace # noqa: PLC0415
        from ..models.submit_availability import SubmitAvailability # noqa: PLC0415
        created_at_ms = self.created_at_ms

        cwd = self.cwd

        live = self.live

        provider = self.provider

        resumable = self.resumable

        room_id = self.room_id

        root_session_id = self.root_session_id

        scope = self.scope.value

        session_id = self.session_id

        settings = self.settings.to_dict()

        status = self.status.value

        submit_availability = self.submit_availability.to_dict()

        title = self.title

        updated_at_ms = self.updated_at_ms

        visible = self.visible

        active_turn_id: None | str | Unset
        if isinstance(self.active_turn_id, Unset):
            active_turn_id = UNSET
        else:
            active_turn_id = self.active_turn_id

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

        config_options: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.config_options, Unset):
            config_options = []
            for config_options_item_data in self.config_options:
                config_options_item = config_options_item_data.to_dict()
                config_options.append(config_options_item)



        forked_from: dict[str, Any] | None | Unset
        if isinstance(self.forked_from, Unset):
            forked_from = UNSET
        elif isinstance(self.forked_from, ForkedFrom):
            forked_from = self.forked_from.to_dict()
        else:
            forked_from = self.forked_from

        isolation: dict[str, Any] | None | Unset
        if isinstance(self.isolation, Unset):
            isolation = UNSET
        elif isinstance(self.isolation, Isolation):
            isolation = self.isolation.to_dict()
        else:
            isolation = self.isolation

        last_error: None | str | Unset
        if isinstance(self.last_error, Unset):
            last_error = UNSET
        else:
            last_error = self.last_error

        modes: dict[str, Any] | None | Unset
        if isinstance(self.modes, Unset):
            modes = UNSET
        elif isinstance(self.modes, SessionModes):
            modes = self.modes.to_dict()
        else:
            modes = self.modes

        provider_session_id: None | str | Unset
        if isinstance(self.provider_session_id, Unset):
            provider_session_id = UNSET
        else:
            provider_session_id = self.provider_session_id

        resume_unsupported_reason: None | str | Unset
        if isinstance(self.resume_unsupported_reason, Unset):
            resume_unsupported_reason = UNSET
        else:
            resume_unsupported_reason = self.resume_unsupported_reason

        side_request_id: None | str | Unset
        if isinstance(self.side_request_id, Unset):
            side_request_id = UNSET
        else:
            side_request_id = self.side_request_id

        source_session_id: None | str | Unset
        if isinstance(self.source_session_id, Unset):
            source_session_id = UNSET
        else:
            source_session_id = self.source_session_id

        workspace: dict[str, Any] | None | Unset
        if isinstance(self.workspace, Unset):
            workspace = UNSET
        elif isinstance(self.workspace, SessionWorkspace):
            workspace = self.workspace.to_dict()
        else:
            workspace = self.workspace


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "createdAtMs": created_at_ms,
            "cwd": cwd,
            "live": live,
            "provider": provider,
            "resumable": resumable,
            "roomId": room_id,
            "rootSessionId": root_session_id,
            "scope": scope,
            "sessionId": session_id,
            "settings": settings,
            "status": status,
            "submitAvailability": submit_availability,
            "title": title,
            "updatedAtMs": updated_at_ms,
            "visible": visible,
        })
        if active_turn_id is not UNSET:
            field_dict["activeTurnId"] = active_turn_id
        if auth_message is not UNSET:
            field_dict["authMessage"] = auth_message
        if auth_state is not UNSET:
            field_dict["authState"] = auth_state
        if config_options is not UNSET:
            field_dict["configOptions"] = config_options
        if forked_from is not UNSET:
            field_dict["forkedFrom"] = forked_from
        if isolation is not UNSET:
            field_dict["isolation"] = isolation
        if last_error is not UNSET:
            field_dict["lastError"] = last_error
        if modes is not UNSET:
            field_dict["modes"] = modes
        if provider_session_id is not UNSET:
            field_dict["providerSessionId"] = provider_session_id
        if resume_unsupported_reason is not UNSET:
            field_dict["resumeUnsupportedReason"] = resume_unsupported_reason
        if side_request_id is not UNSET:
            field_dict["sideRequestId"] = side_request_id
        if source_session_id is not UNSET:
            field_dict["sourceSessionId"] = source_session_id
        if workspace is not UNSET:
            field_dict["workspace"] = workspace

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.config_option import ConfigOption # noqa: PLC0415
        from ..models.forked_from import ForkedFrom # noqa: PLC0415
        from ..models.isolation import Isolation # noqa: PLC0415
        from ..models.session_modes import SessionModes # noqa: PLC0415
        from ..models.session_settings import SessionSettings # noqa: PLC0415
        from ..models.session_workspace import SessionWorkspace # noqa: PLC0415
        from ..models.submit_availability import SubmitAvailability # noqa: PLC0415
        d = dict(src_dict)
        created_at_ms = d.pop("createdAtMs")

        cwd = d.pop("cwd")

        live = d.pop("live")

        provider = d.pop("provider")

        resumable = d.pop("resumable")

        room_id = d.pop("roomId")

        root_session_id = d.pop("rootSessionId")

        scope = Scope(d.pop("scope"))




        session_id = d.pop("sessionId")

        settings = SessionSettings.from_dict(d.pop("settings"))




        status = SessionStatus(d.pop("status"))




        submit_availability = SubmitAvailability.from_dict(d.pop("submitAvailability"))




        title = d.pop("title")

        updated_at_ms = d.pop("updatedAtMs")

        visible = d.pop("visible")

        def _parse_active_turn_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        active_turn_id = _parse_active_turn_id(d.pop("activeTurnId", UNSET))


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


        _config_options = d.pop("configOptions", UNSET)
        config_options: list[ConfigOption] | Unset = UNSET
        if _config_options is not UNSET:
            config_options = []
            for config_options_item_data in _config_options:
                config_options_item = ConfigOption.from_dict(config_options_item_data)



                config_options.append(config_options_item)


        def _parse_forked_from(data: object) -> ForkedFrom | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                forked_from_type_0 = ForkedFrom.from_dict(data)



                return forked_from_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ForkedFrom | None | Unset, data)

        forked_from = _parse_forked_from(d.pop("forkedFrom", UNSET))


        def _parse_isolation(data: object) -> Isolation | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                isolation_type_0 = Isolation.from_dict(data)



                return isolation_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Isolation | None | Unset, data)

        isolation = _parse_isolation(d.pop("isolation", UNSET))


        def _parse_last_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        last_error = _parse_last_error(d.pop("lastError", UNSET))


        def _parse_modes(data: object) -> None | SessionModes | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                modes_type_0 = SessionModes.from_dict(data)



                return modes_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SessionModes | Unset, data)

        modes = _parse_modes(d.pop("modes", UNSET))


        def _parse_provider_session_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        provider_session_id = _parse_provider_session_id(d.pop("providerSessionId", UNSET))


        def _parse_resume_unsupported_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        resume_unsupported_reason = _parse_resume_unsupported_reason(d.pop("resumeUnsupportedReason", UNSET))


        def _parse_side_request_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        side_request_id = _parse_side_request_id(d.pop("sideRequestId", UNSET))


        def _parse_source_session_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        source_session_id = _parse_source_session_id(d.pop("sourceSessionId", UNSET))


        def _parse_workspace(data: object) -> None | SessionWorkspace | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                workspace_type_0 = SessionWorkspace.from_dict(data)



                return workspace_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SessionWorkspace | Unset, data)

        workspace = _parse_workspace(d.pop("workspace", UNSET))


        session = cls(
            created_at_ms=created_at_ms,
            cwd=cwd,
            live=live,
            provider=provider,
            resumable=resumable,
            room_id=room_id,
            root_session_id=root_session_id,
            scope=scope,
            session_id=session_id,
            settings=settings,
            status=status,
            submit_availability=submit_availability,
            title=title,
            updated_at_ms=updated_at_ms,
            visible=visible,
            active_turn_id=active_turn_id,
            auth_message=auth_message,
            auth_state=auth_state,
            config_options=config_options,
            forked_from=forked_from,
            isolation=isolation,
            last_error=last_error,
            modes=modes,
            provider_session_id=provider_session_id,
            resume_unsupported_reason=resume_unsupported_reason,
            side_request_id=side_request_id,
            source_session_id=source_session_id,
            workspace=workspace,
        )


        session.additional_properties = d
        return session

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
