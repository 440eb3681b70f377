from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.queued_turn_summary import QueuedTurnSummary





T = TypeVar("T", bound="QueueUpdatedPayload")



@_attrs_define
class QueueUpdatedPayload:
    """ 
        Attributes:
            bytes_ (int): The queue's size: its turns' `bytes` together (what `--max-queued-bytes` bounds).
            queue (list[QueuedTurnSummary]): The queue as it is now, first to start first: each queued turn's summary (its
                whole input
                is in `GET …/queue`).
            reason (str): `queued`, `edited`, `removed`, `reordered`, `started` (its first went), `sent` (one was
                steered into the running turn), `failed` (its first could not start).
     """

    bytes_: int
    queue: list[QueuedTurnSummary]
    reason: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.queued_turn_summary import QueuedTurnSummary # noqa: PLC0415
        bytes_ = self.bytes_

        queue = []
        for queue_item_data in self.queue:
            queue_item = queue_item_data.to_dict()
            queue.append(queue_item)



        reason = self.reason


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "bytes": bytes_,
            "queue": queue,
            "reason": reason,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.queued_turn_summary import QueuedTurnSummary # noqa: PLC0415
        d = dict(src_dict)
        bytes_ = d.pop("bytes")

        queue = []
        _queue = d.pop("queue")
        for queue_item_data in (_queue):
            queue_item = QueuedTurnSummary.from_dict(queue_item_data)



            queue.append(queue_item)


        reason = d.pop("reason")

        queue_updated_payload = cls(
            bytes_=bytes_,
            queue=queue,
            reason=reason,
        )


        queue_updated_payload.additional_properties = d
        return queue_updated_payload

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
