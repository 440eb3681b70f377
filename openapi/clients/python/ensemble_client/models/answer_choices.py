from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast






T = TypeVar("T", bound="AnswerChoices")



@_attrs_define
class AnswerChoices:
    """ The options chosen for a question.

        Attributes:
            answers (list[str]):
     """

    answers: list[str]





    def to_dict(self) -> dict[str, Any]:
        answers = self.answers




        field_dict: dict[str, Any] = {}

        field_dict.update({
            "answers": answers,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        answers = cast(list[str], d.pop("answers"))


        answer_choices = cls(
            answers=answers,
        )

        return answer_choices

