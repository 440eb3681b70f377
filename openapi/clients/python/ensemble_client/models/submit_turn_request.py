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





T = TypeVar("T", bound="SubmitTurnRequest")



@_attrs_define
class SubmitTurnRequest:
    """ `POST .../turns`.

        Attributes:
            input_ (list[FileInput | ImageInput | TextInput]): What the user says; every item has some text, all of it at
                most `--max-input-bytes` bytes.
            client_submit_id (None | str | Unset): Idempotency key: the same value again returns the same turn and starts
                nothing.
            queue (bool | None | Unset): While a turn runs (or others wait), queue the input as the session's next turn
                instead of
                refusing with 409: it starts when the turns before it have ended (see `…/queue`).
            steer (bool | None | Unset): Add the input to the running turn instead of refusing with 409 (if the provider can
                steer).
     """

    input_: list[FileInput | ImageInput | TextInput]
    client_submit_id: None | str | Unset = UNSET
    queue: bool | None | Unset = UNSET
    steer: bool | None | Unset = UNSET





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



        client_submit_id: None | str | Unset
        if isinstance(self.client_submit_id, Unset):
            client_submit_id = UNSET
        else:
            client_submit_id = self.client_submit_id

        queue: bool | None | Unset
        if isinstance(self.queue, Unset):
            queue = UNSET
        else:
            queue = self.queue

        steer: bool | None | Unset
        if isinstance(self.steer, Unset):
            steer = UNSET
        else:
            steer = self.steer


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "input": input_,
        })
        if client_submit_id is not UNSET:
            field_dict["clientSubmitId"] = client_submit_id
        if queue is not UNSET:
            field_dict["queue"] = queue
        if steer is not UNSET:
            field_dict["steer"] = steer

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


        def _parse_client_submit_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        client_submit_id = _parse_client_submit_id(d.pop("clientSubmitId", UNSET))


        def _parse_queue(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        queue = _parse_queue(d.pop("queue", UNSET))


        def _parse_steer(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        steer = _parse_steer(d.pop("steer", UNSET))


        submit_turn_request = cls(
            input_=input_,
            client_submit_id=client_submit_id,
            queue=queue,
            steer=steer,
        )

        return submit_turn_request

