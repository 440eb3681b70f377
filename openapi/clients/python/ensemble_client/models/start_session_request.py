from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.dir_workspace import DirWorkspace
  from ..models.isolation_request import IsolationRequest
  from ..models.session_settings import SessionSettings
  from ..models.worktree_workspace import WorktreeWorkspace





T = TypeVar("T", bound="StartSessionRequest")



@_attrs_define
class StartSessionRequest:
    """ `POST /v1/rooms/{roomId}/sessions`.

        Attributes:
            checkpoints (bool | None | Unset): `false`: no checkpoints around turns even in a git work tree (default: on
                when the
                session's cwd is in one).
            cwd (None | str | Unset): Absolute working directory of the agent.
            isolation (IsolationRequest | None | Unset):
            provider (None | str | Unset): Provider id (see `GET /v1/providers`); defaults to the built-in `scripted`
                provider.
            provider_session_id (None | str | Unset): Continue this session of the agent's own (see `GET
                /v1/providers/{providerId}/sessions`)
                instead of starting a new one: the agent loads it (`session/load` or `session/resume`).
            session_id (None | str | Unset): Chosen by the client; generated when absent.
            settings (None | SessionSettings | Unset):
            title (None | str | Unset):
            workspace (DirWorkspace | None | Unset | WorktreeWorkspace):
     """

    checkpoints: bool | None | Unset = UNSET
    cwd: None | str | Unset = UNSET
    isolation: IsolationRequest | None | Unset = UNSET
    provider: None | str | Unset = UNSET
    provider_session_id: None | str | Unset = UNSET
    session_id: None | str | Unset = UNSET
    settings: None | SessionSettings | Unset = UNSET
    title: None | str | Unset = UNSET
    workspace: DirWorkspace | None | Unset | WorktreeWorkspace = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.dir_workspace import DirWorkspace # noqa: PLC0415
        from ..models.isolation_request import IsolationRequest # noqa: PLC0415
        from ..models.session_settings import SessionSettings # noqa: PLC0415
        from ..models.worktree_workspace import WorktreeWorkspace # noqa: PLC0415
        checkpoints: bool | None | Unset
        if isinstance(self.checkpoints, Unset):
            checkpoints = UNSET
        else:
            checkpoints = self.checkpoints

        cwd: None | str | Unset
        if isinstance(self.cwd, Unset):
            cwd = UNSET
        else:
            cwd = self.cwd

        isolation: dict[str, Any] | None | Unset
        if isinstance(self.isolation, Unset):
            isolation = UNSET
        elif isinstance(self.isolation, IsolationRequest):
            isolation = self.isolation.to_dict()
        else:
            isolation = self.isolation

        provider: None | str | Unset
        if isinstance(self.provider, Unset):
            provider = UNSET
        else:
            provider = self.provider

        provider_session_id: None | str | Unset
        if isinstance(self.provider_session_id, Unset):
            provider_session_id = UNSET
        else:
            provider_session_id = self.provider_session_id

        session_id: None | str | Unset
        if isinstance(self.session_id, Unset):
            session_id = UNSET
        else:
            session_id = self.session_id

        settings: dict[str, Any] | None | Unset
        if isinstance(self.settings, Unset):
            settings = UNSET
        elif isinstance(self.settings, SessionSettings):
            settings = self.settings.to_dict()
        else:
            settings = self.settings

        title: None | str | Unset
        if isinstance(self.title, Unset):
            title = UNSET
        else:
            title = self.title

        workspace: dict[str, Any] | None | Unset
        if isinstance(self.workspace, Unset):
            workspace = UNSET
        elif isinstance(self.workspace, DirWorkspace):
            workspace = self.workspace.to_dict()
        elif isinstance(self.workspace, WorktreeWorkspace):
            workspace = self.workspace.to_dict()
        else:
            workspace = self.workspace


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if checkpoints is not UNSET:
            field_dict["checkpoints"] = checkpoints
        if cwd is not UNSET:
            field_dict["cwd"] = cwd
        if isolation is not UNSET:
            field_dict["isolation"] = isolation
        if provider is not UNSET:
            field_dict["provider"] = provider
        if provider_session_id is not UNSET:
            field_dict["providerSessionId"] = provider_session_id
        if session_id is not UNSET:
            field_dict["sessionId"] = session_id
        if settings is not UNSET:
            field_dict["settings"] = settings
        if title is not UNSET:
            field_dict["title"] = title
        if workspace is not UNSET:
            field_dict["workspace"] = workspace

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.dir_workspace import DirWorkspace # noqa: PLC0415
        from ..models.isolation_request import IsolationRequest # noqa: PLC0415
        from ..models.session_settings import SessionSettings # noqa: PLC0415
        from ..models.worktree_workspace import WorktreeWorkspace # noqa: PLC0415
        d = dict(src_dict)
        def _parse_checkpoints(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        checkpoints = _parse_checkpoints(d.pop("checkpoints", UNSET))


        def _parse_cwd(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cwd = _parse_cwd(d.pop("cwd", UNSET))


        def _parse_isolation(data: object) -> IsolationRequest | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                isolation_type_0 = IsolationRequest.from_dict(data)



                return isolation_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(IsolationRequest | None | Unset, data)

        isolation = _parse_isolation(d.pop("isolation", UNSET))


        def _parse_provider(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        provider = _parse_provider(d.pop("provider", UNSET))


        def _parse_provider_session_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        provider_session_id = _parse_provider_session_id(d.pop("providerSessionId", UNSET))


        def _parse_session_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        session_id = _parse_session_id(d.pop("sessionId", UNSET))


        def _parse_settings(data: object) -> None | SessionSettings | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                settings_type_0 = SessionSettings.from_dict(data)



                return settings_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SessionSettings | Unset, data)

        settings = _parse_settings(d.pop("settings", UNSET))


        def _parse_title(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        title = _parse_title(d.pop("title", UNSET))


        def _parse_workspace(data: object) -> DirWorkspace | None | Unset | WorktreeWorkspace:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_workspace_spec_type_0 = DirWorkspace.from_dict(data)



                return componentsschemas_workspace_spec_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_workspace_spec_type_1 = WorktreeWorkspace.from_dict(data)



                return componentsschemas_workspace_spec_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DirWorkspace | None | Unset | WorktreeWorkspace, data)

        workspace = _parse_workspace(d.pop("workspace", UNSET))


        start_session_request = cls(
            checkpoints=checkpoints,
            cwd=cwd,
            isolation=isolation,
            provider=provider,
            provider_session_id=provider_session_id,
            session_id=session_id,
            settings=settings,
            title=title,
            workspace=workspace,
        )

        return start_session_request

