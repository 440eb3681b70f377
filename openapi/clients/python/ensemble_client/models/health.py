from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="Health")



@_attrs_define
class Health:
    """ 
        Attributes:
            status (str): `ok`; `/readyz` also says `draining` while shutting down, `database_unavailable` while the
                store's database does not answer, `storage_full` (its disk is full) or `store_unwritable`
                while its last commit failed, and `nats_unavailable` while a host of several cannot reach
                NATS.
            database (None | str | Unset): `/readyz` with the bearer token only: the store's engine, `sqlite` or `postgres`.
            host_id (None | str | Unset): `/readyz` with the bearer token and several hosts (`--nats-url`): this host's id.
            nats (None | str | Unset): `/readyz` with the bearer token and several hosts: `connected`, or `disconnected`
                (then the
                status is `nats_unavailable`).
     """

    status: str
    database: None | str | Unset = UNSET
    host_id: None | str | Unset = UNSET
    nats: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        status = self.status

        database: None | str | Unset
        if isinstance(self.database, Unset):
            database = UNSET
        else:
            database = self.database

        host_id: None | str | Unset
        if isinstance(self.host_id, Unset):
            host_id = UNSET
        else:
            host_id = self.host_id

        nats: None | str | Unset
        if isinstance(self.nats, Unset):
            nats = UNSET
        else:
            nats = self.nats


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "status": status,
        })
        if database is not UNSET:
            field_dict["database"] = database
        if host_id is not UNSET:
            field_dict["hostId"] = host_id
        if nats is not UNSET:
            field_dict["nats"] = nats

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        status = d.pop("status")

        def _parse_database(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        database = _parse_database(d.pop("database", UNSET))


        def _parse_host_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        host_id = _parse_host_id(d.pop("hostId", UNSET))


        def _parse_nats(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        nats = _parse_nats(d.pop("nats", UNSET))


        health = cls(
            status=status,
            database=database,
            host_id=host_id,
            nats=nats,
        )


        health.additional_properties = d
        return health

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
