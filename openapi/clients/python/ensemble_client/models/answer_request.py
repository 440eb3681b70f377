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
            option_id (None | str | Unset): One of the request's `agentOptions` (ACP agents), standing for `decision`;
                without it the
                decision picks the agent's first option of its kind.
     """

    decision: Decision
    answers: AnswerRequestAnswers | Unset = UNSET
    option_id: None | str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.answer_request_answers import AnswerRequestAnswers # noqa: PLC0415
        decision = self.decision.value

        answers: dict[str, Any] | Unset = UNSET
        if not isinstance(self.answers, Unset):
            answers = self.answers.to_dict()

        option_id: None | str | Unset
        if isinstance(self.option_id, Unset):
            option_id = UNSET
        else:
            option_id = self.option_id


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "decision": decision,
        })
        if answers is not UNSET:
            field_dict["answers"] = answers
        if option_id is not UNSET:
            field_dict["optionId"] = option_id

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




        def _parse_option_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        option_id = _parse_option_id(d.pop("optionId", UNSET))


        answer_request = cls(
            decision=decision,
            answers=answers,
            option_id=option_id,
        )

        return answer_request

