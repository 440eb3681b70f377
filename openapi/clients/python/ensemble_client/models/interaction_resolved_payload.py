from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.decision import Decision
from ..models.resolved_by import ResolvedBy
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.interaction_resolved_payload_answers import InteractionResolvedPayloadAnswers





T = TypeVar("T", bound="InteractionResolvedPayload")



@_attrs_define
class InteractionResolvedPayload:
    """ 
        Attributes:
            decision (Decision): An answer to an interaction.
            request_id (str):
            resolved_by (ResolvedBy):
            answers (InteractionResolvedPayloadAnswers | Unset): Answers keyed by question id.
     """

    decision: Decision
    request_id: str
    resolved_by: ResolvedBy
    answers: InteractionResolvedPayloadAnswers | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.interaction_resolved_payload_answers import InteractionResolvedPayloadAnswers # noqa: PLC0415
        decision = self.decision.value

        request_id = self.request_id

        resolved_by = self.resolved_by.value

        answers: dict[str, Any] | Unset = UNSET
        if not isinstance(self.answers, Unset):
            answers = self.answers.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "decision": decision,
            "requestId": request_id,
            "resolvedBy": resolved_by,
        })
        if answers is not UNSET:
            field_dict["answers"] = answers

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.interaction_resolved_payload_answers import InteractionResolvedPayloadAnswers # noqa: PLC0415
        d = dict(src_dict)
        decision = Decision(d.pop("decision"))




        request_id = d.pop("requestId")

        resolved_by = ResolvedBy(d.pop("resolvedBy"))




        _answers = d.pop("answers", UNSET)
        answers: InteractionResolvedPayloadAnswers | Unset
        if isinstance(_answers,  Unset):
            answers = UNSET
        else:
            answers = InteractionResolvedPayloadAnswers.from_dict(_answers)




        interaction_resolved_payload = cls(
            decision=decision,
            request_id=request_id,
            resolved_by=resolved_by,
            answers=answers,
        )


        interaction_resolved_payload.additional_properties = d
        return interaction_resolved_payload

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
