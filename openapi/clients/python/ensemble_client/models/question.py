from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.question_option import QuestionOption





T = TypeVar("T", bound="Question")



@_attrs_define
class Question:
    """ 
        Attributes:
            id (str):
            question (str):
            header (None | str | Unset):
            is_other (bool | Unset): Whether a free-form answer is allowed besides the options.
            is_secret (bool | Unset):
            options (list[QuestionOption] | Unset):
     """

    id: str
    question: str
    header: None | str | Unset = UNSET
    is_other: bool | Unset = UNSET
    is_secret: bool | Unset = UNSET
    options: list[QuestionOption] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.question_option import QuestionOption # noqa: PLC0415
        id = self.id

        question = self.question

        header: None | str | Unset
        if isinstance(self.header, Unset):
            header = UNSET
        else:
            header = self.header

        is_other = self.is_other

        is_secret = self.is_secret

        options: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.options, Unset):
            options = []
            for options_item_data in self.options:
                options_item = options_item_data.to_dict()
                options.append(options_item)




        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "id": id,
            "question": question,
        })
        if header is not UNSET:
            field_dict["header"] = header
        if is_other is not UNSET:
            field_dict["isOther"] = is_other
        if is_secret is not UNSET:
            field_dict["isSecret"] = is_secret
        if options is not UNSET:
            field_dict["options"] = options

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.question_option import QuestionOption # noqa: PLC0415
        d = dict(src_dict)
        id = d.pop("id")

        question = d.pop("question")

        def _parse_header(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        header = _parse_header(d.pop("header", UNSET))


        is_other = d.pop("isOther", UNSET)

        is_secret = d.pop("isSecret", UNSET)

        _options = d.pop("options", UNSET)
        options: list[QuestionOption] | Unset = UNSET
        if _options is not UNSET:
            options = []
            for options_item_data in _options:
                options_item = QuestionOption.from_dict(options_item_data)



                options.append(options_item)


        question = cls(
            id=id,
            question=question,
            header=header,
            is_other=is_other,
            is_secret=is_secret,
            options=options,
        )


        question.additional_properties = d
        return question

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
