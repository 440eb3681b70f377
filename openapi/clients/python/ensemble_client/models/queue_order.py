from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast






T = TypeVar("T", bound="QueueOrder")



@_attrs_define
class QueueOrder:
    """ `PUT …/queue`: the queue's new order.

        Attributes:
            order (list[str]): Every queued turn's id, once, in the order they are to start.
     """

    order: list[str]





    def to_dict(self) -> dict[str, Any]:
        order = self.order




        field_dict: dict[str, Any] = {}

        field_dict.update({
            "order": order,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        order = cast(list[str], d.pop("order"))


        queue_order = cls(
            order=order,
        )

        return queue_order

