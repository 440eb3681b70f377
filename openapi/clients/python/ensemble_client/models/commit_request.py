from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.commit_author import CommitAuthor





T = TypeVar("T", bound="CommitRequest")



@_attrs_define
class CommitRequest:
    """ `POST …/workspace/commit`.

        Attributes:
            message (str):
            author (CommitAuthor | None | Unset):
     """

    message: str
    author: CommitAuthor | None | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.commit_author import CommitAuthor # noqa: PLC0415
        message = self.message

        author: dict[str, Any] | None | Unset
        if isinstance(self.author, Unset):
            author = UNSET
        elif isinstance(self.author, CommitAuthor):
            author = self.author.to_dict()
        else:
            author = self.author


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "message": message,
        })
        if author is not UNSET:
            field_dict["author"] = author

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.commit_author import CommitAuthor # noqa: PLC0415
        d = dict(src_dict)
        message = d.pop("message")

        def _parse_author(data: object) -> CommitAuthor | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                author_type_0 = CommitAuthor.from_dict(data)



                return author_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CommitAuthor | None | Unset, data)

        author = _parse_author(d.pop("author", UNSET))


        commit_request = cls(
            message=message,
            author=author,
        )

        return commit_request

