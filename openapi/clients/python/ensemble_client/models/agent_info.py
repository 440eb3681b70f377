from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="AgentInfo")



@_attrs_define
class AgentInfo:
    """ What an agent advertised in its handshake (ACP `initialize`).

        Attributes:
            close_session (bool): `session/close`.
            load_session (bool): `session/load`: sessions can be resumed with their history.
            mcp_http (bool): MCP servers over HTTP can be passed to sessions.
            prompt_audio (bool): Prompts may carry audio.
            prompt_image (bool): Prompts may carry images.
            protocol_version (int): The protocol version it speaks.
            resume_session (bool): `session/resume`: sessions can be resumed without replaying history.
            auth_methods (list[str] | Unset): Ids of the authentication methods it offers.
            name (None | str | Unset):
            version (None | str | Unset):
     """

    close_session: bool
    load_session: bool
    mcp_http: bool
    prompt_audio: bool
    prompt_image: bool
    protocol_version: int
    resume_session: bool
    auth_methods: list[str] | Unset = UNSET
    name: None | str | Unset = UNSET
    version: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        close_session = self.close_session

        load_session = self.load_session

        mcp_http = self.mcp_http

        prompt_audio = self.prompt_audio

        prompt_image = self.prompt_image

        protocol_version = self.protocol_version

        resume_session = self.resume_session

        auth_methods: list[str] | Unset = UNSET
        if not isinstance(self.auth_methods, Unset):
            auth_methods = self.auth_methods



        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        version: None | str | Unset
        if isinstance(self.version, Unset):
            version = UNSET
        else:
            version = self.version


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "closeSession": close_session,
            "loadSession": load_session,
            "mcpHttp": mcp_http,
            "promptAudio": prompt_audio,
            "promptImage": prompt_image,
            "protocolVersion": protocol_version,
            "resumeSession": resume_session,
        })
        if auth_methods is not UNSET:
            field_dict["authMethods"] = auth_methods
        if name is not UNSET:
            field_dict["name"] = name
        if version is not UNSET:
            field_dict["version"] = version

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        close_session = d.pop("closeSession")

        load_session = d.pop("loadSession")

        mcp_http = d.pop("mcpHttp")

        prompt_audio = d.pop("promptAudio")

        prompt_image = d.pop("promptImage")

        protocol_version = d.pop("protocolVersion")

        resume_session = d.pop("resumeSession")

        auth_methods = cast(list[str], d.pop("authMethods", UNSET))


        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))


        def _parse_version(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        version = _parse_version(d.pop("version", UNSET))


        agent_info = cls(
            close_session=close_session,
            load_session=load_session,
            mcp_http=mcp_http,
            prompt_audio=prompt_audio,
            prompt_image=prompt_image,
            protocol_version=protocol_version,
            resume_session=resume_session,
            auth_methods=auth_methods,
            name=name,
            version=version,
        )


        agent_info.additional_properties = d
        return agent_info

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
