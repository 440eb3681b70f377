from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.config_choice import ConfigChoice





T = TypeVar("T", bound="ConfigOption")



@_attrs_define
class ConfigOption:
    """ A setting of the agent a client may change for the next turn (`PATCH …/config`): the model, the
    reasoning effort, an approval preset, …

        Attributes:
            choices (list[ConfigChoice]):
            current (str): The current value (one of the choices' values).
            id (str):
            name (str):
            category (None | str | Unset): What the option is about, when the agent says (`model`, `thought_level`, `mode`,
                …).
            description (None | str | Unset):
     """

    choices: list[ConfigChoice]
    current: str
    id: str
    name: str
    category: None | str | Unset = UNSET
    description: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.config_choice import ConfigChoice # noqa: PLC0415
        choices = []
        for choices_item_data in self.choices:
            choices_item = choices_item_data.to_dict()
            choices.append(choices_item)



        current = self.current

        id = self.id

        name = self.name

        category: None | str | Unset
        if isinstance(self.category, Unset):
            category = UNSET
        else:
            category = self.category

        description: None | str | Unset
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "choices": choices,
            "current": current,
            "id": id,
            "name": name,
        })
        if category is not UNSET:
            field_dict["category"] = category
        if description is not UNSET:
            field_dict["description"] = description

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.config_choice import ConfigChoice # noqa: PLC0415
        d = dict(src_dict)
        choices = []
        _choices = d.pop("choices")
        for choices_item_data in (_choices):
            choices_item = ConfigChoice.from_dict(choices_item_data)



            choices.append(choices_item)


        current = d.pop("current")

        id = d.pop("id")

        name = d.pop("name")

        def _parse_category(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        category = _parse_category(d.pop("category", UNSET))


        def _parse_description(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        description = _parse_description(d.pop("description", UNSET))


        config_option = cls(
            choices=choices,
            current=current,
            id=id,
            name=name,
            category=category,
            description=description,
        )


        config_option.additional_properties = d
        return config_option

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
