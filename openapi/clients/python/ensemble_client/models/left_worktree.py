from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.session_workspace import SessionWorkspace





T = TypeVar("T", bound="LeftWorktree")



@_attrs_define
class LeftWorktree:
    """ A worktree a closed session left on disk (closed without removing it): it stays until a purge
    (`DELETE …?purge=true`) or `--worktree-retention-secs` removes it.

        Attributes:
            closed_at_ms (int): When its session closed (its record's last change).
            disk_bytes (int): Bytes its files take.
            session_id (str):
            workspace (SessionWorkspace): A session's workspace.
     """

    closed_at_ms: int
    disk_bytes: int
    session_id: str
    workspace: SessionWorkspace
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.session_workspace import SessionWorkspace # noqa: PLC0415
        closed_at_ms = self.closed_at_ms

        disk_bytes = self.disk_bytes

        session_id = self.session_id

        workspace = self.workspace.to_dict()


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "closedAtMs": closed_at_ms,
            "diskBytes": disk_bytes,
            "sessionId": session_id,
            "workspace": workspace,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.session_workspace import SessionWorkspace # noqa: PLC0415
        d = dict(src_dict)
        closed_at_ms = d.pop("closedAtMs")

        disk_bytes = d.pop("diskBytes")

        session_id = d.pop("sessionId")

        workspace = SessionWorkspace.from_dict(d.pop("workspace"))




        left_worktree = cls(
            closed_at_ms=closed_at_ms,
            disk_bytes=disk_bytes,
            session_id=session_id,
            workspace=workspace,
        )


        left_worktree.additional_properties = d
        return left_worktree

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
