from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.file_input_type import FileInputType
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="FileInput")



@_attrs_define
class FileInput:
    """ A file inside the session's workspace, given to the agent as a link or with its content,
    as the agent takes them. In events it has its `bytes` and `mimeType` too.

        Attributes:
            path (str): Inside the session's workspace: relative to its cwd, or absolute.
            type_ (FileInputType):
            bytes_ (int | None | Unset): Set by the server: the file's size when the turn started.
            mime_type (None | str | Unset): Set by the server: `text/plain` for a UTF-8 file, an image's own type for an
                image,
                else `application/octet-stream`.
     """

    path: str
    type_: FileInputType
    bytes_: int | None | Unset = UNSET
    mime_type: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        path = self.path

        type_ = self.type_.value

        bytes_: int | None | Unset
        if isinstance(self.bytes_, Unset):
            bytes_ = UNSET
        else:
            bytes_ = self.bytes_

        mime_type: None | str | Unset
        if isinstance(self.mime_type, Unset):
            mime_type = UNSET
        else:
            mime_type = self.mime_type


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "path": path,
            "type": type_,
        })
        if bytes_ is not UNSET:
            field_dict["bytes"] = bytes_
        if mime_type is not UNSET:
            field_dict["mimeType"] = mime_type

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        path = d.pop("path")

        type_ = FileInputType(d.pop("type"))




        def _parse_bytes_(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        bytes_ = _parse_bytes_(d.pop("bytes", UNSET))


        def _parse_mime_type(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        mime_type = _parse_mime_type(d.pop("mimeType", UNSET))


        file_input = cls(
            path=path,
            type_=type_,
            bytes_=bytes_,
            mime_type=mime_type,
        )


        file_input.additional_properties = d
        return file_input

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
