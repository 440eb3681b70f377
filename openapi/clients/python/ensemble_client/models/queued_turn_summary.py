from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.file_input import FileInput
  from ..models.image_input import ImageInput
  from ..models.text_input import TextInput





T = TypeVar("T", bound="QueuedTurnSummary")



@_attrs_define
class QueuedTurnSummary:
    """ A queued turn as `queue.updated` shows it: enough to draw the queue (its place, its text's
    beginning, its images and files), not its whole input.

        Attributes:
            bytes_ (int): Its input's size: the bytes of its JSON as the queue keeps it (images by their
                `attachment`), what `--max-queued-bytes` counts.
            items (int): How many items its input has (texts, images and files).
            position (int): Its place in the queue, from 0 (the next to start).
            preview (str): The beginning of its text (its text items, a line each), at most `--queue-preview-bytes`
                bytes, cut at a character boundary.
            queued_at_ms (int):
            turn_id (str): The id the turn will have.
            attachments (list[FileInput | ImageInput | TextInput] | Unset): Its images and files, as the turn will carry
                them (its text items left out).
            client_submit_id (None | str | Unset):
            truncated (bool | Unset): The text is longer than `preview`: `GET …/queue` has all of it.
     """

    bytes_: int
    items: int
    position: int
    preview: str
    queued_at_ms: int
    turn_id: str
    attachments: list[FileInput | ImageInput | TextInput] | Unset = UNSET
    client_submit_id: None | str | Unset = UNSET
    truncated: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.file_input import FileInput # noqa: PLC0415
        from ..models.image_input import ImageInput # noqa: PLC0415
        from ..models.text_input import TextInput # noqa: PLC0415
        bytes_ = self.bytes_

        items = self.items

        position = self.position

        preview = self.preview

        queued_at_ms = self.queued_at_ms

        turn_id = self.turn_id

        attachments: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.attachments, Unset):
            attachments = []
            for attachments_item_data in self.attachments:
                attachments_item: dict[str, Any]
                if isinstance(attachments_item_data, TextInput):
                    attachments_item = attachments_item_data.to_dict()
                elif isinstance(attachments_item_data, ImageInput):
                    attachments_item = attachments_item_data.to_dict()
                else:
                    attachments_item = attachments_item_data.to_dict()

                attachments.append(attachments_item)



        client_submit_id: None | str | Unset
        if isinstance(self.client_submit_id, Unset):
            client_submit_id = UNSET
        else:
            client_submit_id = self.client_submit_id

        truncated = self.truncated


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "bytes": bytes_,
            "items": items,
            "position": position,
            "preview": preview,
            "queuedAtMs": queued_at_ms,
            "turnId": turn_id,
        })
        if attachments is not UNSET:
            field_dict["attachments"] = attachments
        if client_submit_id is not UNSET:
            field_dict["clientSubmitId"] = client_submit_id
        if truncated is not UNSET:
            field_dict["truncated"] = truncated

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.file_input import FileInput # noqa: PLC0415
        from ..models.image_input import ImageInput # noqa: PLC0415
        from ..models.text_input import TextInput # noqa: PLC0415
        d = dict(src_dict)
        bytes_ = d.pop("bytes")

        items = d.pop("items")

        position = d.pop("position")

        preview = d.pop("preview")

        queued_at_ms = d.pop("queuedAtMs")

        turn_id = d.pop("turnId")

        _attachments = d.pop("attachments", UNSET)
        attachments: list[FileInput | ImageInput | TextInput] | Unset = UNSET
        if _attachments is not UNSET:
            attachments = []
            for attachments_item_data in _attachments:
                def _parse_attachments_item(data: object) -> FileInput | ImageInput | TextInput:
                    try:
                        if not isinstance(data, dict):
                            raise TypeError()
                        componentsschemas_input_item_type_0 = TextInput.from_dict(data)



                        return componentsschemas_input_item_type_0
                    except (TypeError, ValueError, AttributeError, KeyError):
                        pass
                    try:
                        if not isinstance(data, dict):
                            raise TypeError()
                        componentsschemas_input_item_type_1 = ImageInput.from_dict(data)



                        return componentsschemas_input_item_type_1
                    except (TypeError, ValueError, AttributeError, KeyError):
                        pass
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_input_item_type_2 = FileInput.from_dict(data)



                    return componentsschemas_input_item_type_2

                attachments_item = _parse_attachments_item(attachments_item_data)

                attachments.append(attachments_item)


        def _parse_client_submit_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        client_submit_id = _parse_client_submit_id(d.pop("clientSubmitId", UNSET))


        truncated = d.pop("truncated", UNSET)

        queued_turn_summary = cls(
            bytes_=bytes_,
            items=items,
            position=position,
            preview=preview,
            queued_at_ms=queued_at_ms,
            turn_id=turn_id,
            attachments=attachments,
            client_submit_id=client_submit_id,
            truncated=truncated,
        )


        queued_turn_summary.additional_properties = d
        return queued_turn_summary

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
