from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.checkpoint_phase import CheckpointPhase
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="CheckpointInfo")



@_attrs_define
class CheckpointInfo:
    """ One checkpoint of a session's working tree.

        Attributes:
            commit (str): The git commit holding it.
            created_at_ms (int):
            id (str): Its id (time-ordered): what `…/changes` and `…/restore` take.
            phase (CheckpointPhase): When a checkpoint was taken.
            turn_id (None | str | Unset): The turn it was taken for (none for a restore's).
     """

    commit: str
    created_at_ms: int
    id: str
    phase: CheckpointPhase
    turn_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        commit = self.commit

        created_at_ms = self.created_at_ms

        id = self.id

        phase = self.phase.value

        turn_id: None | str | Unset
        if isinstance(self.turn_id, Unset):
            turn_id = UNSET
        else:
            turn_id = self.turn_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "commit": commit,
            "createdAtMs": created_at_ms,
            "id": id,
            "phase": phase,
        })
        if turn_id is not UNSET:
            field_dict["turnId"] = turn_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        commit = d.pop("commit")

        created_at_ms = d.pop("createdAtMs")

        id = d.pop("id")

        phase = CheckpointPhase(d.pop("phase"))




        def _parse_turn_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        turn_id = _parse_turn_id(d.pop("turnId", UNSET))


        checkpoint_info = cls(
            commit=commit,
            created_at_ms=created_at_ms,
            id=id,
            phase=phase,
            turn_id=turn_id,
        )


        checkpoint_info.additional_properties = d
        return checkpoint_info

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
