from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.turn_origin import TurnOrigin
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.file_input import FileInput
  from ..models.image_input import ImageInput
  from ..models.text_input import TextInput





T = TypeVar("T", bound="TurnStartedPayload")



@_attrs_define
class TurnStartedPayload:
    """ 
        Attributes:
            origin (TurnOrigin):
            turn_id (str):
            client_submit_id (None | str | Unset):
            goal_operation_id (None | str | Unset):
            goal_repair_epoch (int | None | Unset):
            goal_revision (int | None | Unset):
            input_ (list[FileInput | ImageInput | TextInput] | Unset): The submitted input (user turns).
     """

    origin: TurnOrigin
    turn_id: str
    client_submit_id: None | str | Unset = UNSET
    goal_operation_id: None | str | Unset = UNSET
    goal_repair_epoch: int | None | Unset = UNSET
    goal_revision: int | None | Unset = UNSET
    input_: list[FileInput | ImageInput | TextInput] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.file_input import FileInput # noqa: PLC0415
        from ..models.image_input import ImageInput # noqa: PLC0415
        from ..models.text_input import TextInput # noqa: PLC0415
        origin = self.origin.value

        turn_id = self.turn_id

        client_submit_id: None | str | Unset
        if isinstance(self.client_submit_id, Unset):
            client_submit_id = UNSET
        else:
            client_submit_id = self.client_submit_id

        goal_operation_id: None | str | Unset
        if isinstance(self.goal_operation_id, Unset):
            goal_operation_id = UNSET
        else:
            goal_operation_id = self.goal_operation_id

        goal_repair_epoch: int | None | Unset
        if isinstance(self.goal_repair_epoch, Unset):
            goal_repair_epoch = UNSET
        else:
            goal_repair_epoch = self.goal_repair_epoch

        goal_revision: int | None | Unset
        if isinstance(self.goal_revision, Unset):
            goal_revision = UNSET
        else:
            goal_revision = self.goal_revision

        input_: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.input_, Unset):
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
        field_dict.update(self.additional_properties)
        field_dict.update({
            "origin": origin,
            "turnId": turn_id,
        })
        if client_submit_id is not UNSET:
            field_dict["clientSubmitId"] = client_submit_id
        if goal_operation_id is not UNSET:
            field_dict["goalOperationId"] = goal_operation_id
        if goal_repair_epoch is not UNSET:
            field_dict["goalRepairEpoch"] = goal_repair_epoch
        if goal_revision is not UNSET:
            field_dict["goalRevision"] = goal_revision
        if input_ is not UNSET:
            field_dict["input"] = input_

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.file_input import FileInput # noqa: PLC0415
        from ..models.image_input import ImageInput # noqa: PLC0415
        from ..models.text_input import TextInput # noqa: PLC0415
        d = dict(src_dict)
        origin = TurnOrigin(d.pop("origin"))




        turn_id = d.pop("turnId")

        def _parse_client_submit_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        client_submit_id = _parse_client_submit_id(d.pop("clientSubmitId", UNSET))


        def _parse_goal_operation_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        goal_operation_id = _parse_goal_operation_id(d.pop("goalOperationId", UNSET))


        def _parse_goal_repair_epoch(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        goal_repair_epoch = _parse_goal_repair_epoch(d.pop("goalRepairEpoch", UNSET))


        def _parse_goal_revision(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        goal_revision = _parse_goal_revision(d.pop("goalRevision", UNSET))


        _input_ = d.pop("input", UNSET)
        input_: list[FileInput | ImageInput | TextInput] | Unset = UNSET
        if _input_ is not UNSET:
            input_ = []
            for input_item_data in _input_:
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


        turn_started_payload = cls(
            origin=origin,
            turn_id=turn_id,
            client_submit_id=client_submit_id,
            goal_operation_id=goal_operation_id,
            goal_repair_epoch=goal_repair_epoch,
            goal_revision=goal_revision,
            input_=input_,
        )


        turn_started_payload.additional_properties = d
        return turn_started_payload

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
