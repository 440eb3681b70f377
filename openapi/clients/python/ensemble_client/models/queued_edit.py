from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.file_input import FileInput
  from ..models.image_input import ImageInput
  from ..models.text_input import TextInput





T = TypeVar("T", bound="QueuedEdit")



@_attrs_define
class QueuedEdit:
    """ `PATCH …/queue/{turnId}`: a queued turn's new input.

        Attributes:
            input_ (list[FileInput | ImageInput | TextInput]):
     """

    input_: list[FileInput | ImageInput | TextInput]





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




        field_dict: dict[str, Any] = {}

        field_dict.update({
            "input": input_,
        })

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


        queued_edit = cls(
            input_=input_,
        )

        return queued_edit

