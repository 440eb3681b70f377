from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.decision import Decision
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.answer_request_answers import AnswerRequestAnswers





T = TypeVar("T", bound="AnswerRequest")



@_attrs_define
class AnswerRequest:
    """ `POST .../interactions/{requestId}`.

        Attributes:
            decision (Decision): An answer to an interaction.
            answers (AnswerRequestAnswers | Unset): Answers keyed by question id.
     """

    decision: Decision
    answers: AnswerRequestAnswers | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.answer_request_answers import AnswerRequestAnswers # noqa: PLC0415
        decision = self.decision.value

        answers: dict[str, Any] | Unset = UNSET
        if not isinstance(self.answers, Unset):
            answers = self.answers.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "decision": decision,
        })
        if answers is not UNSET:
            field_dict["answers"] = answers

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.answer_request_answers import AnswerRequestAnswers # noqa: PLC0415
        d = dict(src_dict)
        decision = Decision(d.pop("decision"))




        _answers = d.pop("answers", UNSET)
        answers: AnswerRequestAnswers | Unset
        if isinstance(_answers,  Unset):
            answers = UNSET
        else:
            answers = AnswerRequestAnswers.from_dict(_answers)




        answer_request = cls(
            decision=decision,
            answers=answers,
        )

        return answer_request

