from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="WorkspaceRestoredPayload")



@_attrs_define
class WorkspaceRestoredPayload:
    """ 
        Attributes:
            checkpoint (str): The checkpoint the working tree was put back to.
            undo (str): The checkpoint of the working tree just before: restore it to undo this one.
            kept (list[str] | Unset): Files the checkpoint has that were left as they are: now larger than
                `--checkpoint-max-file-bytes`, they are in no checkpoint, so the undo could not bring
                them back.
     """

    checkpoint: str
    undo: str
    kept: list[str] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        checkpoint = self.checkpoint

        undo = self.undo

        kept: list[str] | Unset = UNSET
        if not isinstance(self.kept, Unset):
            kept = self.kept




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "checkpoint": checkpoint,
            "undo": undo,
        })
        if kept is not UNSET:
            field_dict["kept"] = kept

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        checkpoint = d.pop("checkpoint")

        undo = d.pop("undo")

        kept = cast(list[str], d.pop("kept", UNSET))


        workspace_restored_payload = cls(
            checkpoint=checkpoint,
            undo=undo,
            kept=kept,
        )


        workspace_restored_payload.additional_properties = d
        return workspace_restored_payload

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
