from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="ForkRequest")



@_attrs_define
class ForkRequest:
    """ `POST …/fork`.

        Attributes:
            at_turn (str): The source's turn the fork goes through (its workspace starts from the checkpoint after it).
            session_id (None | str | Unset): The fork's id; generated when absent.
            title (None | str | Unset): Default: the source's title with " (fork)".
     """

    at_turn: str
    session_id: None | str | Unset = UNSET
    title: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        at_turn = self.at_turn

        session_id: None | str | Unset
        if isinstance(self.session_id, Unset):
            session_id = UNSET
        else:
            session_id = self.session_id

        title: None | str | Unset
        if isinstance(self.title, Unset):
            title = UNSET
        else:
            title = self.title


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "atTurn": at_turn,
        })
        if session_id is not UNSET:
            field_dict["sessionId"] = session_id
        if title is not UNSET:
            field_dict["title"] = title

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        at_turn = d.pop("atTurn")

        def _parse_session_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        session_id = _parse_session_id(d.pop("sessionId", UNSET))


        def _parse_title(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        title = _parse_title(d.pop("title", UNSET))


        fork_request = cls(
            at_turn=at_turn,
            session_id=session_id,
            title=title,
        )

        return fork_request

