from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.answer_choices import AnswerChoices





T = TypeVar("T", bound="AnswerRequestAnswers")



@_attrs_define
class AnswerRequestAnswers:
    """ Answers keyed by question id.

     """

    additional_properties: dict[str, AnswerChoices | str] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.answer_choices import AnswerChoices # noqa: PLC0415
        
        field_dict: dict[str, Any] = {}
        for prop_name, prop in self.additional_properties.items():
            
            if isinstance(prop, AnswerChoices):
                field_dict[prop_name] = prop.to_dict()
            else:
                field_dict[prop_name] = prop


        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.answer_choices import AnswerChoices # noqa: PLC0415
        d = dict(src_dict)
        answer_request_answers = cls(
        )


        additional_properties = {}
        for prop_name, prop_dict in d.items():
            def _parse_additional_property(data: object) -> AnswerChoices | str:
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_question_answer_type_1 = AnswerChoices.from_dict(data)



                    return componentsschemas_question_answer_type_1
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                return cast(AnswerChoices | str, data)

            additional_property = _parse_additional_property(prop_dict)

            additional_properties[prop_name] = additional_property

        answer_request_answers.additional_properties = additional_properties
        return answer_request_answers

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> AnswerChoices | str:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: AnswerChoices | str) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
