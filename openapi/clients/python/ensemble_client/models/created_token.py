from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.token_info import TokenInfo





T = TypeVar("T", bound="CreatedToken")



@_attrs_define
class CreatedToken:
    """ A new token and its secret, which is shown this once and never again.

        Attributes:
            secret (str):
            token (TokenInfo): A managed token, without its secret.
     """

    secret: str
    token: TokenInfo
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.token_info import TokenInfo # noqa: PLC0415
        secret = self.secret

        token = self.token.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "secret": secret,
            "token": token,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.token_info import TokenInfo # noqa: PLC0415
        d = dict(src_dict)
        secret = d.pop("secret")

        token = TokenInfo.from_dict(d.pop("token"))




        created_token = cls(
            secret=secret,
            token=token,
        )


        created_token.additional_properties = d
        return created_token

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
