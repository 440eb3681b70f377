from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.budget_exhausted_event import BudgetExhaustedEvent
  from ..models.call_completed_event import CallCompletedEvent
  from ..models.call_started_event import CallStartedEvent
  from ..models.call_updated_event import CallUpdatedEvent
  from ..models.commands_updated_event import CommandsUpdatedEvent
  from ..models.goal_cleared_event import GoalClearedEvent
  from ..models.goal_reconcile_required_event import GoalReconcileRequiredEvent
  from ..models.goal_updated_event import GoalUpdatedEvent
  from ..models.interaction_requested_event import InteractionRequestedEvent
  from ..models.interaction_resolved_event import InteractionResolvedEvent
  from ..models.message_completed_event import MessageCompletedEvent
  from ..models.message_delta_event import MessageDeltaEvent
  from ..models.network_blocked_event import NetworkBlockedEvent
  from ..models.notice_event import NoticeEvent
  from ..models.plan_updated_event import PlanUpdatedEvent
  from ..models.queue_updated_event import QueueUpdatedEvent
  from ..models.reasoning_completed_event import ReasoningCompletedEvent
  from ..models.reasoning_delta_event import ReasoningDeltaEvent
  from ..models.session_completed_event import SessionCompletedEvent
  from ..models.session_failed_event import SessionFailedEvent
  from ..models.session_needs_attention_event import SessionNeedsAttentionEvent
  from ..models.session_started_event import SessionStartedEvent
  from ..models.session_updated_event import SessionUpdatedEvent
  from ..models.turn_canceled_event import TurnCanceledEvent
  from ..models.turn_changes_event import TurnChangesEvent
  from ..models.turn_completed_event import TurnCompletedEvent
  from ..models.turn_failed_event import TurnFailedEvent
  from ..models.turn_started_event import TurnStartedEvent
  from ..models.turn_steered_event import TurnSteeredEvent
  from ..models.usage_updated_event import UsageUpdatedEvent
  from ..models.workspace_committed_event import WorkspaceCommittedEvent
  from ..models.workspace_restored_event import WorkspaceRestoredEvent





T = TypeVar("T", bound="EventList")



@_attrs_define
class EventList:
    """ A page of a room's durable events.

        Attributes:
            data (list[BudgetExhaustedEvent | CallCompletedEvent | CallStartedEvent | CallUpdatedEvent |
                CommandsUpdatedEvent | GoalClearedEvent | GoalReconcileRequiredEvent | GoalUpdatedEvent |
                InteractionRequestedEvent | InteractionResolvedEvent | MessageCompletedEvent | MessageDeltaEvent |
                NetworkBlockedEvent | NoticeEvent | PlanUpdatedEvent | QueueUpdatedEvent | ReasoningCompletedEvent |
                ReasoningDeltaEvent | SessionCompletedEvent | SessionFailedEvent | SessionNeedsAttentionEvent |
                SessionStartedEvent | SessionUpdatedEvent | TurnCanceledEvent | TurnChangesEvent | TurnCompletedEvent |
                TurnFailedEvent | TurnStartedEvent | TurnSteeredEvent | UsageUpdatedEvent | WorkspaceCommittedEvent |
                WorkspaceRestoredEvent]):
            head_seq (int): The room's latest seq.
            next_ (int | None | Unset): The `after` of the next page, when events follow this one: a page ends at `limit`
                events or
                at `--events-page-bytes` of them (always at least one), so a short page is not the end.
                Absent at the head.
            prev (int | None | Unset): A session's page read with `before`: the `before` of the next older page, when older
                events
                of the session are kept. Absent at the session's first kept event.
     """

    data: list[BudgetExhaustedEvent | CallCompletedEvent | CallStartedEvent | CallUpdatedEvent | CommandsUpdatedEvent | GoalClearedEvent | GoalReconcileRequiredEvent | GoalUpdatedEvent | InteractionRequestedEvent | InteractionResolvedEvent | MessageCompletedEvent | MessageDeltaEvent | NetworkBlockedEvent | NoticeEvent | PlanUpdatedEvent | QueueUpdatedEvent | ReasoningCompletedEvent | ReasoningDeltaEvent | SessionCompletedEvent | SessionFailedEvent | SessionNeedsAttentionEvent | SessionStartedEvent | SessionUpdatedEvent | TurnCanceledEvent | TurnChangesEvent | TurnCompletedEvent | TurnFailedEvent | TurnStartedEvent | TurnSteeredEvent | UsageUpdatedEvent | WorkspaceCommittedEvent | WorkspaceRestoredEvent]
    head_seq: int
    next_: int | None | Unset = UNSET
    prev: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.budget_exhausted_event import BudgetExhaustedEvent # noqa: PLC0415
        from ..models.call_completed_event import CallCompletedEvent # noqa: PLC0415
        from ..models.call_started_event import CallStartedEvent # noqa: PLC0415
        from ..models.call_updated_event import CallUpdatedEvent # noqa: PLC0415
        from ..models.commands_updated_event import CommandsUpdatedEvent # noqa: PLC0415
        from ..models.goal_cleared_event import GoalClearedEvent # noqa: PLC0415
        from ..models.goal_reconcile_required_event import GoalReconcileRequiredEvent # noqa: PLC0415
        from ..models.goal_updated_event import GoalUpdatedEvent # noqa: PLC0415
        from ..models.interaction_requested_event import InteractionRequestedEvent # noqa: PLC0415
        from ..models.interaction_resolved_event import InteractionResolvedEvent # noqa: PLC0415
        from ..models.message_completed_event import MessageCompletedEvent # noqa: PLC0415
        from ..models.message_delta_event import MessageDeltaEvent # noqa: PLC0415
        from ..models.network_blocked_event import NetworkBlockedEvent # noqa: PLC0415
        from ..models.notice_event import NoticeEvent # noqa: PLC0415
        from ..models.plan_updated_event import PlanUpdatedEvent # noqa: PLC0415
        from ..models.queue_updated_event import QueueUpdatedEvent # noqa: PLC0415
        from ..models.reasoning_completed_event import ReasoningCompletedEvent # noqa: PLC0415
        from ..models.reasoning_delta_event import ReasoningDeltaEvent # noqa: PLC0415
        from ..models.session_completed_event import SessionCompletedEvent # noqa: PLC0415
        from ..models.session_failed_event import SessionFailedEvent # noqa: PLC0415
        from ..models.session_needs_attention_event import SessionNeedsAttentionEvent # noqa: PLC0415
        from ..models.session_started_event import SessionStartedEvent # noqa: PLC0415
        from ..models.session_updated_event import SessionUpdatedEvent # noqa: PLC0415
        from ..models.turn_canceled_event import TurnCanceledEvent # noqa: PLC0415
        from ..models.turn_changes_event import TurnChangesEvent # noqa: PLC0415
        from ..models.turn_completed_event import TurnCompletedEvent # noqa: PLC0415
        from ..models.turn_failed_event import TurnFailedEvent # noqa: PLC0415
        from ..models.turn_started_event import TurnStartedEvent # noqa: PLC0415
        from ..models.turn_steered_event import TurnSteeredEvent # noqa: PLC0415
        from ..models.usage_updated_event import UsageUpdatedEvent # noqa: PLC0415
        from ..models.workspace_committed_event import WorkspaceCommittedEvent # noqa: PLC0415
        from ..models.workspace_restored_event import WorkspaceRestoredEvent # noqa: PLC0415
        data = []
        for data_item_data in self.data:
            data_item: dict[str, Any]
            if isinstance(data_item_data, SessionStartedEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, SessionUpdatedEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, SessionCompletedEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, SessionFailedEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, TurnStartedEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, TurnCompletedEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, TurnFailedEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, TurnCanceledEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, TurnSteeredEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, MessageDeltaEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, MessageCompletedEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, ReasoningDeltaEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, ReasoningCompletedEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, CallStartedEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, CallUpdatedEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, CallCompletedEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, InteractionRequestedEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, InteractionResolvedEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, UsageUpdatedEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, CommandsUpdatedEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, PlanUpdatedEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, GoalUpdatedEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, GoalClearedEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, GoalReconcileRequiredEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, NoticeEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, TurnChangesEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, WorkspaceRestoredEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, WorkspaceCommittedEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, QueueUpdatedEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, SessionNeedsAttentionEvent):
                data_item = data_item_data.to_dict()
            elif isinstance(data_item_data, BudgetExhaustedEvent):
                data_item = data_item_data.to_dict()
            else:
                data_item = data_item_data.to_dict()

            data.append(data_item)



        head_seq = self.head_seq

        next_: int | None | Unset
        if isinstance(self.next_, Unset):
            next_ = UNSET
        else:
            next_ = self.next_

        prev: int | None | Unset
        if isinstance(self.prev, Unset):
            prev = UNSET
        else:
            prev = self.prev


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "data": data,
            "headSeq": head_seq,
        })
        if next_ is not UNSET:
            field_dict["next"] = next_
        if prev is not UNSET:
            field_dict["prev"] = prev

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.budget_exhausted_event import BudgetExhaustedEvent # noqa: PLC0415
        from ..models.call_completed_event import CallCompletedEvent # noqa: PLC0415
        from ..models.call_started_event import CallStartedEvent # noqa: PLC0415
        from ..models.call_updated_event import CallUpdatedEvent # noqa: PLC0415
        from ..models.commands_updated_event import CommandsUpdatedEvent # noqa: PLC0415
        from ..models.goal_cleared_event import GoalClearedEvent # noqa: PLC0415
        from ..models.goal_reconcile_required_event import GoalReconcileRequiredEvent # noqa: PLC0415
        from ..models.goal_updated_event import GoalUpdatedEvent # noqa: PLC0415
        from ..models.interaction_requested_event import InteractionRequestedEvent # noqa: PLC0415
        from ..models.interaction_resolved_event import InteractionResolvedEvent # noqa: PLC0415
        from ..models.message_completed_event import MessageCompletedEvent # noqa: PLC0415
        from ..models.message_delta_event import MessageDeltaEvent # noqa: PLC0415
        from ..models.network_blocked_event import NetworkBlockedEvent # noqa: PLC0415
        from ..models.notice_event import NoticeEvent # noqa: PLC0415
        from ..models.plan_updated_event import PlanUpdatedEvent # noqa: PLC0415
        from ..models.queue_updated_event import QueueUpdatedEvent # noqa: PLC0415
        from ..models.reasoning_completed_event import ReasoningCompletedEvent # noqa: PLC0415
        from ..models.reasoning_delta_event import ReasoningDeltaEvent # noqa: PLC0415
        from ..models.session_completed_event import SessionCompletedEvent # noqa: PLC0415
        from ..models.session_failed_event import SessionFailedEvent # noqa: PLC0415
        from ..models.session_needs_attention_event import SessionNeedsAttentionEvent # noqa: PLC0415
        from ..models.session_started_event import SessionStartedEvent # noqa: PLC0415
        from ..models.session_updated_event import SessionUpdatedEvent # noqa: PLC0415
        from ..models.turn_canceled_event import TurnCanceledEvent # noqa: PLC0415
        from ..models.turn_changes_event import TurnChangesEvent # noqa: PLC0415
        from ..models.turn_completed_event import TurnCompletedEvent # noqa: PLC0415
        from ..models.turn_failed_event import TurnFailedEvent # noqa: PLC0415
        from ..models.turn_started_event import TurnStartedEvent # noqa: PLC0415
        from ..models.turn_steered_event import TurnSteeredEvent # noqa: PLC0415
        from ..models.usage_updated_event import UsageUpdatedEvent # noqa: PLC0415
        from ..models.workspace_committed_event import WorkspaceCommittedEvent # noqa: PLC0415
        from ..models.workspace_restored_event import WorkspaceRestoredEvent # noqa: PLC0415
        d = dict(src_dict)
        data = []
        _data = d.pop("data")
        for data_item_data in (_data):
            def _parse_data_item(data: object) -> BudgetExhaustedEvent | CallCompletedEvent | CallStartedEvent | CallUpdatedEvent | CommandsUpdatedEvent | GoalClearedEvent | GoalReconcileRequiredEvent | GoalUpdatedEvent | InteractionRequestedEvent | InteractionResolvedEvent | MessageCompletedEvent | MessageDeltaEvent | NetworkBlockedEvent | NoticeEvent | PlanUpdatedEvent | QueueUpdatedEvent | ReasoningCompletedEvent | ReasoningDeltaEvent | SessionCompletedEvent | SessionFailedEvent | SessionNeedsAttentionEvent | SessionStartedEvent | SessionUpdatedEvent | TurnCanceledEvent | TurnChangesEvent | TurnCompletedEvent | TurnFailedEvent | TurnStartedEvent | TurnSteeredEvent | UsageUpdatedEvent | WorkspaceCommittedEvent | WorkspaceRestoredEvent:
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_0 = SessionStartedEvent.from_dict(data)



                    return componentsschemas_event_type_0
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_1 = SessionUpdatedEvent.from_dict(data)



                    return componentsschemas_event_type_1
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_2 = SessionCompletedEvent.from_dict(data)



                    return componentsschemas_event_type_2
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_3 = SessionFailedEvent.from_dict(data)



                    return componentsschemas_event_type_3
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_4 = TurnStartedEvent.from_dict(data)



                    return componentsschemas_event_type_4
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_5 = TurnCompletedEvent.from_dict(data)



                    return componentsschemas_event_type_5
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_6 = TurnFailedEvent.from_dict(data)



                    return componentsschemas_event_type_6
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_7 = TurnCanceledEvent.from_dict(data)



                    return componentsschemas_event_type_7
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_8 = TurnSteeredEvent.from_dict(data)



                    return componentsschemas_event_type_8
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_9 = MessageDeltaEvent.from_dict(data)



                    return componentsschemas_event_type_9
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_10 = MessageCompletedEvent.from_dict(data)



                    return componentsschemas_event_type_10
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_11 = ReasoningDeltaEvent.from_dict(data)



                    return componentsschemas_event_type_11
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_12 = ReasoningCompletedEvent.from_dict(data)



                    return componentsschemas_event_type_12
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_13 = CallStartedEvent.from_dict(data)



                    return componentsschemas_event_type_13
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_14 = CallUpdatedEvent.from_dict(data)



                    return componentsschemas_event_type_14
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_15 = CallCompletedEvent.from_dict(data)



                    return componentsschemas_event_type_15
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_16 = InteractionRequestedEvent.from_dict(data)



                    return componentsschemas_event_type_16
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_17 = InteractionResolvedEvent.from_dict(data)



                    return componentsschemas_event_type_17
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_18 = UsageUpdatedEvent.from_dict(data)



                    return componentsschemas_event_type_18
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_19 = CommandsUpdatedEvent.from_dict(data)



                    return componentsschemas_event_type_19
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_20 = PlanUpdatedEvent.from_dict(data)



                    return componentsschemas_event_type_20
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_21 = GoalUpdatedEvent.from_dict(data)



                    return componentsschemas_event_type_21
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_22 = GoalClearedEvent.from_dict(data)



                    return componentsschemas_event_type_22
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_23 = GoalReconcileRequiredEvent.from_dict(data)



                    return componentsschemas_event_type_23
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_24 = NoticeEvent.from_dict(data)



                    return componentsschemas_event_type_24
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_25 = TurnChangesEvent.from_dict(data)



                    return componentsschemas_event_type_25
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_26 = WorkspaceRestoredEvent.from_dict(data)



                    return componentsschemas_event_type_26
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_27 = WorkspaceCommittedEvent.from_dict(data)



                    return componentsschemas_event_type_27
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_28 = QueueUpdatedEvent.from_dict(data)



                    return componentsschemas_event_type_28
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_29 = SessionNeedsAttentionEvent.from_dict(data)



                    return componentsschemas_event_type_29
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_event_type_30 = BudgetExhaustedEvent.from_dict(data)



                    return componentsschemas_event_type_30
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_event_type_31 = NetworkBlockedEvent.from_dict(data)



                return componentsschemas_event_type_31

            data_item = _parse_data_item(data_item_data)

            data.append(data_item)


        head_seq = d.pop("headSeq")

        def _parse_next_(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        next_ = _parse_next_(d.pop("next", UNSET))


        def _parse_prev(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        prev = _parse_prev(d.pop("prev", UNSET))


        event_list = cls(
            data=data,
            head_seq=head_seq,
            next_=next_,
            prev=prev,
        )


        event_list.additional_properties = d
        return event_list

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
