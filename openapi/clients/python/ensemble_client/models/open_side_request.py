from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="OpenSideRequest")



@_attrs_define
class OpenSideRequest:
    """ `POST .../sides`.

        Attributes:
            request_id (str): Idempotency key of the open: the same again returns the same side.
            side_session_id (None | str | Unset): The side's session id; generated when absent.
     """

    request_id: str
    side_session_id: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        request_id = self.request_id

        side_session_id: None | str | Unset
        if isinstance(self.side_session_id, Unset):
            side_session_id = UNSET
        else:
            side_session_id = self.side_session_id


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "requestId": request_id,
        })
        if side_session_id is not UNSET:
            field_dict["sideSessionId"] = side_session_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        request_id = d.pop("requestId")

        def _parse_side_session_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        side_session_id = _parse_side_session_id(d.pop("sideSessionId", UNSET))


        open_side_request = cls(
            request_id=request_id,
            side_session_id=side_session_id,
        )

        return open_side_request

