from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.call_status import CallStatus
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.file_change import FileChange





T = TypeVar("T", bound="CallCompletedPayload")



@_attrs_define
class CallCompletedPayload:
    """ 
        Attributes:
            call_id (str):
            status (CallStatus):
            changes (list[FileChange] | Unset):
            exit_code (int | None | Unset):
            output (None | str | Unset):
     """

    call_id: str
    status: CallStatus
    changes: list[FileChange] | Unset = UNSET
    exit_code: int | None | Unset = UNSET
    output: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.file_change import FileChange # noqa: PLC0415
        call_id = self.call_id

        status = self.status.value

        changes: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.changes, Unset):
            changes = []
            for changes_item_data in self.changes:
                changes_item = changes_item_data.to_dict()
                changes.append(changes_item)



        exit_code: int | None | Unset
        if isinstance(self.exit_code, Unset):
            exit_code = UNSET
        else:
            exit_code = self.exit_code

        output: None | str | Unset
        if isinstance(self.output, Unset):
            output = UNSET
        else:
            output = self.output


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "callId": call_id,
            "status": status,
        })
        if changes is not UNSET:
            field_dict["changes"] = changes
        if exit_code is not UNSET:
            field_dict["exitCode"] = exit_code
        if output is not UNSET:
            field_dict["output"] = output

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.file_change import FileChange # noqa: PLC0415
        d = dict(src_dict)
        call_id = d.pop("callId")

        status = CallStatus(d.pop("status"))




        _changes = d.pop("changes", UNSET)
        changes: list[FileChange] | Unset = UNSET
        if _changes is not UNSET:
            changes = []
            for changes_item_data in _changes:
                changes_item = FileChange.from_dict(changes_item_data)



                changes.append(changes_item)


        def _parse_exit_code(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        exit_code = _parse_exit_code(d.pop("exitCode", UNSET))


        def _parse_output(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        output = _parse_output(d.pop("output", UNSET))


        call_completed_payload = cls(
            call_id=call_id,
            status=status,
            changes=changes,
            exit_code=exit_code,
            output=output,
        )


        call_completed_payload.additional_properties = d
        return call_completed_payload

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
