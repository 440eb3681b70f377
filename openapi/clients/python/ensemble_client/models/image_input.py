from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.image_input_type import ImageInputType
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="ImageInput")



@_attrs_define
class ImageInput:
    """ An image: sent as `data` (base64) with its `mimeType`, or named by `path` inside the
    session's workspace. The server keeps it (`attachment`) and never repeats `data`: in
    events an image has `mimeType`, `bytes` and `attachment` (read it at
    `GET …/sessions/{sessionId}/attachments/{attachment}`).

        Attributes:
            type_ (ImageInputType):
            attachment (None | str | Unset): Set by the server: the image's id among the session's attachments.
            bytes_ (int | None | Unset): Set by the server: the image's size.
            data (None | str | Unset): The image, base64 (standard alphabet, padded); with `mimeType`. Never in events.
            mime_type (None | str | Unset): `image/png`, `image/jpeg`, `image/gif` or `image/webp` (checked against the
                bytes).
            name (None | str | Unset): A name to show for it (a pasted image's file name).
            path (None | str | Unset): Instead of `data`: a file inside the session's workspace (relative to its cwd, or
                absolute).
     """

    type_: ImageInputType
    attachment: None | str | Unset = UNSET
    bytes_: int | None | Unset = UNSET
    data: None | str | Unset = UNSET
    mime_type: None | str | Unset = UNSET
    name: None | str | Unset = UNSET
    path: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_.value

        attachment: None | str | Unset
        if isinstance(self.attachment, Unset):
            attachment = UNSET
        else:
            attachment = self.attachment

        bytes_: int | None | Unset
        if isinstance(self.bytes_, Unset):
            bytes_ = UNSET
        else:
            bytes_ = self.bytes_

        data: None | str | Unset
        if isinstance(self.data, Unset):
            data = UNSET
        else:
            data = self.data

        mime_type: None | str | Unset
        if isinstance(self.mime_type, Unset):
            mime_type = UNSET
        else:
            mime_type = self.mime_type

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        path: None | str | Unset
        if isinstance(self.path, Unset):
            path = UNSET
        else:
            path = self.path


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "type": type_,
        })
        if attachment is not UNSET:
            field_dict["attachment"] = attachment
        if bytes_ is not UNSET:
            field_dict["bytes"] = bytes_
        if data is not UNSET:
            field_dict["data"] = data
        if mime_type is not UNSET:
            field_dict["mimeType"] = mime_type
        if name is not UNSET:
            field_dict["name"] = name
        if path is not UNSET:
            field_dict["path"] = path

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        type_ = ImageInputType(d.pop("type"))




        def _parse_attachment(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        attachment = _parse_attachment(d.pop("attachment", UNSET))


        def _parse_bytes_(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        bytes_ = _parse_bytes_(d.pop("bytes", UNSET))


        def _parse_data(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        data = _parse_data(d.pop("data", UNSET))


        def _parse_mime_type(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        mime_type = _parse_mime_type(d.pop("mimeType", UNSET))


        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))


        def _parse_path(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        path = _parse_path(d.pop("path", UNSET))


        image_input = cls(
            type_=type_,
            attachment=attachment,
            bytes_=bytes_,
            data=data,
            mime_type=mime_type,
            name=name,
            path=path,
        )


        image_input.additional_properties = d
        return image_input

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
