from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.call_kind import CallKind
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.call_started_payload_input import CallStartedPayloadInput
  from ..models.file_change import FileChange





T = TypeVar("T", bound="CallStartedPayload")



@_attrs_define
class CallStartedPayload:
    """ 
        Attributes:
            call_id (str):
            kind (CallKind): What kind of call an item is.
            name (str):
            changes (list[FileChange] | Unset):
            command (None | str | Unset):
            cwd (None | str | Unset):
            input_ (CallStartedPayloadInput | Unset):
     """

    call_id: str
    kind: CallKind
    name: str
    changes: list[FileChange] | Unset = UNSET
    command: None | str | Unset = UNSET
    cwd: None | str | Unset = UNSET
    input_: CallStartedPayloadInput | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.call_started_payload_input import CallStartedPayloadInput # noqa: PLC0415
        from ..models.file_change import FileChange # noqa: PLC0415
        call_id = self.call_id

        kind = self.kind.value

        name = self.name

        changes: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.changes, Unset):
            changes = []
            for changes_item_data in self.changes:
                changes_item = changes_item_data.to_dict()
                changes.append(changes_item)



        command: None | str | Unset
        if isinstance(self.command, Unset):
            command = UNSET
        else:
            command = self.command

        cwd: None | str | Unset
        if isinstance(self.cwd, Unset):
            cwd = UNSET
        else:
            cwd = self.cwd

        input_: dict[str, Any] | Unset = UNSET
        if not isinstance(self.input_, Unset):
            input_ = self.input_.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "callId": call_id,
            "kind": kind,
            "name": name,
        })
        if changes is not UNSET:
            field_dict["changes"] = changes
        if command is not UNSET:
            field_dict["command"] = command
        if cwd is not UNSET:
            field_dict["cwd"] = cwd
        if input_ is not UNSET:
            field_dict["input"] = input_

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.call_started_payload_input import CallStartedPayloadInput # noqa: PLC0415
        from ..models.file_change import FileChange # noqa: PLC0415
        d = dict(src_dict)
        call_id = d.pop("callId")

        kind = CallKind(d.pop("kind"))




        name = d.pop("name")

        _changes = d.pop("changes", UNSET)
        changes: list[FileChange] | Unset = UNSET
        if _changes is not UNSET:
            changes = []
            for changes_item_data in _changes:
                changes_item = FileChange.from_dict(changes_item_data)



                changes.append(changes_item)


        def _parse_command(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        command = _parse_command(d.pop("command", UNSET))


        def _parse_cwd(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cwd = _parse_cwd(d.pop("cwd", UNSET))


        _input_ = d.pop("input", UNSET)
        input_: CallStartedPayloadInput | Unset
        if isinstance(_input_,  Unset):
            input_ = UNSET
        else:
            input_ = CallStartedPayloadInput.from_dict(_input_)




        call_started_payload = cls(
            call_id=call_id,
            kind=kind,
            name=name,
            changes=changes,
            command=command,
            cwd=cwd,
            input_=input_,
        )


        call_started_payload.additional_properties = d
        return call_started_payload

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
