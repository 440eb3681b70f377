from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.session_workspace import SessionWorkspace





T = TypeVar("T", bound="WorkspaceInfo")



@_attrs_define
class WorkspaceInfo:
    """ A session's workspace and the bytes it takes on disk.

        Attributes:
            disk_bytes (int): Bytes its files take (a worktree's own directory; for a dir session, its work tree).
            workspace (SessionWorkspace): A session's workspace.
     """

    disk_bytes: int
    workspace: SessionWorkspace
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.session_workspace import SessionWorkspace # noqa: PLC0415
        disk_bytes = self.disk_bytes

        workspace = self.workspace.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "diskBytes": disk_bytes,
            "workspace": workspace,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.session_workspace import SessionWorkspace # noqa: PLC0415
        d = dict(src_dict)
        disk_bytes = d.pop("diskBytes")

        workspace = SessionWorkspace.from_dict(d.pop("workspace"))




        workspace_info = cls(
            disk_bytes=disk_bytes,
            workspace=workspace,
        )


        workspace_info.additional_properties = d
        return workspace_info

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
