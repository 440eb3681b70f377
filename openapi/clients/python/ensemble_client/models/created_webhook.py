from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.webhook_info import WebhookInfo





T = TypeVar("T", bound="CreatedWebhook")



@_attrs_define
class CreatedWebhook:
    """ A new webhook and its signing secret, which is shown this once.

        Attributes:
            secret (str):
            webhook (WebhookInfo): A webhook, without its secret.
     """

    secret: str
    webhook: WebhookInfo
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.webhook_info import WebhookInfo # noqa: PLC0415
        secret = self.secret

        webhook = self.webhook.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "secret": secret,
            "webhook": webhook,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.webhook_info import WebhookInfo # noqa: PLC0415
        d = dict(src_dict)
        secret = d.pop("secret")

        webhook = WebhookInfo.from_dict(d.pop("webhook"))




        created_webhook = cls(
            secret=secret,
            webhook=webhook,
        )


        created_webhook.additional_properties = d
        return created_webhook

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
