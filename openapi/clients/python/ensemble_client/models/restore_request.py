from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="RestoreRequest")



@_attrs_define
class RestoreRequest:
    """ `POST …/restore`.

        Attributes:
            checkpoint (str): A checkpoint id from `…/checkpoints` (or a `turn.changes` event).
     """

    checkpoint: str





    def to_dict(self) -> dict[str, Any]:
        checkpoint = self.checkpoint


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "checkpoint": checkpoint,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        checkpoint = d.pop("checkpoint")

        restore_request = cls(
            checkpoint=checkpoint,
        )

        return restore_request

