from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.config_request_options_type_0 import ConfigRequestOptionsType0





T = TypeVar("T", bound="ConfigRequest")



@_attrs_define
class ConfigRequest:
    """ `PATCH .../config`: what to change for the next turn.

        Attributes:
            mode (None | str | Unset): A mode id from the session's `modes.available`.
            options (ConfigRequestOptionsType0 | None | Unset): Option ids from the session's `configOptions`, each with one
                of its choices' values.
     """

    mode: None | str | Unset = UNSET
    options: ConfigRequestOptionsType0 | None | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.config_request_options_type_0 import ConfigRequestOptionsType0 # noqa: PLC0415
        mode: None | str | Unset
        if isinstance(self.mode, Unset):
            mode = UNSET
        else:
            mode = self.mode

        options: dict[str, Any] | None | Unset
        if isinstance(self.options, Unset):
            options = UNSET
        elif isinstance(self.options, ConfigRequestOptionsType0):
            options = self.options.to_dict()
        else:
            options = self.options


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if mode is not UNSET:
            field_dict["mode"] = mode
        if options is not UNSET:
            field_dict["options"] = options

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.config_request_options_type_0 import ConfigRequestOptionsType0 # noqa: PLC0415
        d = dict(src_dict)
        def _parse_mode(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        mode = _parse_mode(d.pop("mode", UNSET))


        def _parse_options(data: object) -> ConfigRequestOptionsType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                options_type_0 = ConfigRequestOptionsType0.from_dict(data)



                return options_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ConfigRequestOptionsType0 | None | Unset, data)

        options = _parse_options(d.pop("options", UNSET))


        config_request = cls(
            mode=mode,
            options=options,
        )

        return config_request

