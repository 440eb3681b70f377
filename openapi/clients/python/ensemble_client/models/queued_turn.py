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





T = TypeVar("T", bound="QueuedTurn")



@_attrs_define
class QueuedTurn:
    """ A follow-up waiting for the session's running turn to end (`POST …/turns` with `queue: true`).
    It starts, as the turn `turnId`, once the turns before it have ended.

        Attributes:
            input_ (list[FileInput | ImageInput | TextInput]): As the turn will carry it (images kept, as in
                `turn.started`).
            queued_at_ms (int):
            turn_id (str): The id the turn will have.
            client_submit_id (None | str | Unset):
     """

    input_: list[FileInput | ImageInput | TextInput]
    queued_at_ms: int
    turn_id: str
    client_submit_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.file_input import FileInput # noqa: PLC0415
        from ..models.image_input import ImageInput # noqa: PLC0415
        from ..models.text_input import TextInput # noqa: PLC0415
        input_ = []
        for input_item_data in self.input_:
            input_item: dict[str, Any]
            if isinstance(input_item_data, TextInput):
                input_item = input_item_data.to_dict()
            elif isinstance(input_item_data, ImageInput):
                input_item = input_item_data.to_dict()
            else:
                input_item = input_item_data.to_dict()

            input_.append(input_item)



        queued_at_ms = self.queued_at_ms

        turn_id = self.turn_id

        client_submit_id: None | str | Unset
        if isinstance(self.client_submit_id, Unset):
            client_submit_id = UNSET
        else:
            client_submit_id = self.client_submit_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "input": input_,
            "queuedAtMs": queued_at_ms,
            "turnId": turn_id,
        })
        if client_submit_id is not UNSET:
            field_dict["clientSubmitId"] = client_submit_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.file_input import FileInput # noqa: PLC0415
        from ..models.image_input import ImageInput # noqa: PLC0415
        from ..models.text_input import TextInput # noqa: PLC0415
        d = dict(src_dict)
        input_ = []
        _input_ = d.pop("input")
        for input_item_data in (_input_):
            def _parse_input_item(data: object) -> FileInput | ImageInput | TextInput:
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

            input_item = _parse_input_item(input_item_data)

            input_.append(input_item)


        queued_at_ms = d.pop("queuedAtMs")

        turn_id = d.pop("turnId")

        def _parse_client_submit_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        client_submit_id = _parse_client_submit_id(d.pop("clientSubmitId", UNSET))


        queued_turn = cls(
            input_=input_,
            queued_at_ms=queued_at_ms,
            turn_id=turn_id,
            client_submit_id=client_submit_id,
        )


        queued_turn.additional_properties = d
        return queued_turn

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
