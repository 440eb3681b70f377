from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.open_text_kind import OpenTextKind
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="OpenText")



@_attrs_define
class OpenText:
    """ A message or reasoning the running turn is streaming.

        Attributes:
            item_id (str):
            kind (OpenTextKind):
            text (str):
            turn_id (None | str | Unset):
     """

    item_id: str
    kind: OpenTextKind
    text: str
    turn_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        item_id = self.item_id

        kind = self.kind.value

        text = self.text

        turn_id: None | str | Unset
        if isinstance(self.turn_id, Unset):
            turn_id = UNSET
        else:
            turn_id = self.turn_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "itemId": item_id,
            "kind": kind,
            "text": text,
        })
        if turn_id is not UNSET:
            field_dict["turnId"] = turn_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        item_id = d.pop("itemId")

        kind = OpenTextKind(d.pop("kind"))




        text = d.pop("text")

        def _parse_turn_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        turn_id = _parse_turn_id(d.pop("turnId", UNSET))


        open_text = cls(
            item_id=item_id,
            kind=kind,
            text=text,
            turn_id=turn_id,
        )


        open_text.additional_properties = d
        return open_text

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
