from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.session_settings import SessionSettings





T = TypeVar("T", bound="StartSessionRequest")



@_attrs_define
class StartSessionRequest:
    """ `POST /v1/rooms/{roomId}/sessions`.

        Attributes:
            cwd (None | str | Unset): Absolute working directory of the agent.
            provider (None | str | Unset): Provider id (see `GET /v1/providers`); defaults to the built-in `scripted`
                provider.
            session_id (None | str | Unset): Chosen by the client; generated when absent.
            settings (None | SessionSettings | Unset):
            title (None | str | Unset):
     """

    cwd: None | str | Unset = UNSET
    provider: None | str | Unset = UNSET
    session_id: None | str | Unset = UNSET
    settings: None | SessionSettings | Unset = UNSET
    title: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.session_settings import SessionSettings # noqa: PLC0415
        cwd: None | str | Unset
        if isinstance(self.cwd, Unset):
            cwd = UNSET
        else:
            cwd = self.cwd

        provider: None | str | Unset
        if isinstance(self.provider, Unset):
            provider = UNSET
        else:
            provider = self.provider

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


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if cwd is not UNSET:
            field_dict["cwd"] = cwd
        if provider is not UNSET:
            field_dict["provider"] = provider
        if session_id is not UNSET:
            field_dict["sessionId"] = session_id
        if settings is not UNSET:
            field_dict["settings"] = settings
        if title is not UNSET:
            field_dict["title"] = title

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.session_settings import SessionSettings # noqa: PLC0415
        d = dict(src_dict)
        def _parse_cwd(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cwd = _parse_cwd(d.pop("cwd", UNSET))


        def _parse_provider(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        provider = _parse_provider(d.pop("provider", UNSET))


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


        start_session_request = cls(
            cwd=cwd,
            provider=provider,
            session_id=session_id,
            settings=settings,
            title=title,
        )

        return start_session_request

