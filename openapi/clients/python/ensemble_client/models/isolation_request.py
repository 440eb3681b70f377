from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="IsolationRequest")



@_attrs_define
class IsolationRequest:
    """ What a session start may ask of its isolation: only narrower than its provider's.

        Attributes:
            max_processes (int | None | Unset):
            memory_mb (int | None | Unset):
            network (list[str] | None | Unset): Fewer endpoints than the provider allows (a subset of its list).
     """

    max_processes: int | None | Unset = UNSET
    memory_mb: int | None | Unset = UNSET
    network: list[str] | None | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        max_processes: int | None | Unset
        if isinstance(self.max_processes, Unset):
            max_processes = UNSET
        else:
            max_processes = self.max_processes

        memory_mb: int | None | Unset
        if isinstance(self.memory_mb, Unset):
            memory_mb = UNSET
        else:
            memory_mb = self.memory_mb

        network: list[str] | None | Unset
        if isinstance(self.network, Unset):
            network = UNSET
        elif isinstance(self.network, list):
            network = self.network


        else:
            network = self.network


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if max_processes is not UNSET:
            field_dict["maxProcesses"] = max_processes
        if memory_mb is not UNSET:
            field_dict["memoryMb"] = memory_mb
        if network is not UNSET:
            field_dict["network"] = network

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        def _parse_max_processes(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_processes = _parse_max_processes(d.pop("maxProcesses", UNSET))


        def _parse_memory_mb(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        memory_mb = _parse_memory_mb(d.pop("memoryMb", UNSET))


        def _parse_network(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                network_type_0 = cast(list[str], data)

                return network_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        network = _parse_network(d.pop("network", UNSET))


        isolation_request = cls(
            max_processes=max_processes,
            memory_mb=memory_mb,
            network=network,
        )

        return isolation_request

