from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.all_hosts import AllHosts
from ..models.isolation_mode import IsolationMode
from ..models.limits_enforcement import LimitsEnforcement
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="Isolation")



@_attrs_define
class Isolation:
    """ The isolation of a provider's sessions, or of one session.

        Attributes:
            mode (IsolationMode): Whether a provider's sessions are confined.
            home (list[str] | Unset): The paths of the real home the agent sees (its own configuration and login), as
                written
                (`~/.claude`).
            limits (LimitsEnforcement | Unset): How a session's memory and process limits are enforced on this machine.
            max_processes (int | None | Unset): The most processes (and threads) the session may have at once.
            memory_mb (int | None | Unset): The most memory the session's processes may use together, in MiB.
            network (AllHosts | list[str] | Unset): The network a confined agent may reach: nothing directly; through
                Ensemble's egress proxy,
                the listed endpoints, or everything (`"all"`).
     """

    mode: IsolationMode
    home: list[str] | Unset = UNSET
    limits: LimitsEnforcement | Unset = UNSET
    max_processes: int | None | Unset = UNSET
    memory_mb: int | None | Unset = UNSET
    network: AllHosts | list[str] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        mode = self.mode.value

        home: list[str] | Unset = UNSET
        if not isinstance(self.home, Unset):
            home = self.home



        limits: str | Unset = UNSET
        if not isinstance(self.limits, Unset):
            limits = self.limits.value


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

        network: list[str] | str | Unset
        if isinstance(self.network, Unset):
            network = UNSET
        elif isinstance(self.network, AllHosts):
            network = self.network.value
        else:
            network = self.network





        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "mode": mode,
        })
        if home is not UNSET:
            field_dict["home"] = home
        if limits is not UNSET:
            field_dict["limits"] = limits
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
        mode = IsolationMode(d.pop("mode"))




        home = cast(list[str], d.pop("home", UNSET))


        _limits = d.pop("limits", UNSET)
        limits: LimitsEnforcement | Unset
        if isinstance(_limits,  Unset):
            limits = UNSET
        else:
            limits = LimitsEnforcement(_limits)




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


        def _parse_network(data: object) -> AllHosts | list[str] | Unset:
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                componentsschemas_network_access_type_0 = AllHosts(data)



                return componentsschemas_network_access_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, list):
                raise TypeError()
            componentsschemas_network_access_type_1 = cast(list[str], data)

            return componentsschemas_network_access_type_1

        network = _parse_network(d.pop("network", UNSET))


        isolation = cls(
            mode=mode,
            home=home,
            limits=limits,
            max_processes=max_processes,
            memory_mb=memory_mb,
            network=network,
        )


        isolation.additional_properties = d
        return isolation

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
