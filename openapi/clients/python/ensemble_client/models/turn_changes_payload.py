from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.changed_file import ChangedFile





T = TypeVar("T", bound="TurnChangesPayload")



@_attrs_define
class TurnChangesPayload:
    """ 
        Attributes:
            after (str): The checkpoint taken after it ended.
            before (str): The checkpoint taken before the turn started.
            files (list[ChangedFile]):
            turn_id (str):
            skipped (list[str] | Unset): Files left out of the checkpoint (larger than `--checkpoint-max-file-bytes`).
     """

    after: str
    before: str
    files: list[ChangedFile]
    turn_id: str
    skipped: list[str] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.changed_file import ChangedFile # noqa: PLC0415
        after = self.after

        before = self.before

        files = []
        for files_item_data in self.files:
            files_item = files_item_data.to_dict()
            files.append(files_item)



        turn_id = self.turn_id

        skipped: list[str] | Unset = UNSET
        if not isinstance(self.skipped, Unset):
            skipped = self.skipped




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "after": after,
            "before": before,
            "files": files,
            "turnId": turn_id,
        })
        if skipped is not UNSET:
            field_dict["skipped"] = skipped

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.changed_file import ChangedFile # noqa: PLC0415
        d = dict(src_dict)
        after = d.pop("after")

        before = d.pop("before")

        files = []
        _files = d.pop("files")
        for files_item_data in (_files):
            files_item = ChangedFile.from_dict(files_item_data)



            files.append(files_item)


        turn_id = d.pop("turnId")

        skipped = cast(list[str], d.pop("skipped", UNSET))


        turn_changes_payload = cls(
            after=after,
            before=before,
            files=files,
            turn_id=turn_id,
            skipped=skipped,
        )


        turn_changes_payload.additional_properties = d
        return turn_changes_payload

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
