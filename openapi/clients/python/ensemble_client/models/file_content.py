from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="FileContent")



@_attrs_define
class FileContent:
    """ 
        Attributes:
            binary (bool): Not text (a NUL byte, or not UTF-8): `content` is absent.
            path (str):
            size (int): The file's whole size in bytes.
            truncated (bool): The file is longer than the server shows (`--max-file-view-bytes`): `content` is its start.
            content (None | str | Unset):
     """

    binary: bool
    path: str
    size: int
    truncated: bool
    content: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        binary = self.binary

        path = self.path

        size = self.size

        truncated = self.truncated

        content: None | str | Unset
        if isinstance(self.content, Unset):
            content = UNSET
        else:
            content = self.content


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "binary": binary,
            "path": path,
            "size": size,
            "truncated": truncated,
        })
        if content is not UNSET:
            field_dict["content"] = content

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        binary = d.pop("binary")

        path = d.pop("path")

        size = d.pop("size")

        truncated = d.pop("truncated")

        def _parse_content(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        content = _parse_content(d.pop("content", UNSET))


        file_content = cls(
            binary=binary,
            path=path,
            size=size,
            truncated=truncated,
            content=content,
        )


        file_content.additional_properties = d
        return file_content

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
