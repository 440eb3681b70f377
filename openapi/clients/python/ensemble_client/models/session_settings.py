from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.approval_policy import ApprovalPolicy
from ..models.collaboration_mode import CollaborationMode
from ..models.sandbox_mode import SandboxMode
from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="SessionSettings")



@_attrs_define
class SessionSettings:
    """ Per-session settings, as submitted at start.

        Attributes:
            approval_policy (ApprovalPolicy | None | Unset):
            collaboration_mode (CollaborationMode | None | Unset):
            model (None | str | Unset):
            queue_after_failure (bool | None | Unset): `true`: queued follow-ups go on after a turn that failed too (by
                default the queue waits
                for a turn that completed or was canceled).
            reasoning_effort (None | str | Unset):
            sandbox (None | SandboxMode | Unset):
     """

    approval_policy: ApprovalPolicy | None | Unset = UNSET
    collaboration_mode: CollaborationMode | None | Unset = UNSET
    model: None | str | Unset = UNSET
    queue_after_failure: bool | None | Unset = UNSET
    reasoning_effort: None | str | Unset = UNSET
    sandbox: None | SandboxMode | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        approval_policy: None | str | Unset
        if isinstance(self.approval_policy, Unset):
            approval_policy = UNSET
        elif isinstance(self.approval_policy, ApprovalPolicy):
            approval_policy = self.approval_policy.value
        else:
            approval_policy = self.approval_policy

        collaboration_mode: None | str | Unset
        if isinstance(self.collaboration_mode, Unset):
            collaboration_mode = UNSET
        elif isinstance(self.collaboration_mode, CollaborationMode):
            collaboration_mode = self.collaboration_mode.value
        else:
            collaboration_mode = self.collaboration_mode

        model: None | str | Unset
        if isinstance(self.model, Unset):
            model = UNSET
        else:
            model = self.model

        queue_after_failure: bool | None | Unset
        if isinstance(self.queue_after_failure, Unset):
            queue_after_failure = UNSET
        else:
            queue_after_failure = self.queue_after_failure

        reasoning_effort: None | str | Unset
        if isinstance(self.reasoning_effort, Unset):
            reasoning_effort = UNSET
        else:
            reasoning_effort = self.reasoning_effort

        sandbox: None | str | Unset
        if isinstance(self.sandbox, Unset):
            sandbox = UNSET
        elif isinstance(self.sandbox, SandboxMode):
            sandbox = self.sandbox.value
        else:
            sandbox = self.sandbox


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if approval_policy is not UNSET:
            field_dict["approvalPolicy"] = approval_policy
        if collaboration_mode is not UNSET:
            field_dict["collaborationMode"] = collaboration_mode
        if model is not UNSET:
            field_dict["model"] = model
        if queue_after_failure is not UNSET:
            field_dict["queueAfterFailure"] = queue_after_failure
        if reasoning_effort is not UNSET:
            field_dict["reasoningEffort"] = reasoning_effort
        if sandbox is not UNSET:
            field_dict["sandbox"] = sandbox

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        def _parse_approval_policy(data: object) -> ApprovalPolicy | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                approval_policy_type_0 = ApprovalPolicy(data)



                return approval_policy_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ApprovalPolicy | None | Unset, data)

        approval_policy = _parse_approval_policy(d.pop("approvalPolicy", UNSET))


        def _parse_collaboration_mode(data: object) -> CollaborationMode | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                collaboration_mode_type_0 = CollaborationMode(data)



                return collaboration_mode_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CollaborationMode | None | Unset, data)

        collaboration_mode = _parse_collaboration_mode(d.pop("collaborationMode", UNSET))


        def _parse_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model = _parse_model(d.pop("model", UNSET))


        def _parse_queue_after_failure(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        queue_after_failure = _parse_queue_after_failure(d.pop("queueAfterFailure", UNSET))


        def _parse_reasoning_effort(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reasoning_effort = _parse_reasoning_effort(d.pop("reasoningEffort", UNSET))


        def _parse_sandbox(data: object) -> None | SandboxMode | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                sandbox_type_0 = SandboxMode(data)



                return sandbox_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SandboxMode | Unset, data)

        sandbox = _parse_sandbox(d.pop("sandbox", UNSET))


        session_settings = cls(
            approval_policy=approval_policy,
            collaboration_mode=collaboration_mode,
            model=model,
            queue_after_failure=queue_after_failure,
            reasoning_effort=reasoning_effort,
            sandbox=sandbox,
        )

        return session_settings

