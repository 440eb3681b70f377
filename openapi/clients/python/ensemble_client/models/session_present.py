from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.command_info import CommandInfo
  from ..models.current_plan import CurrentPlan
  from ..models.goal import Goal
  from ..models.interaction import Interaction
  from ..models.open_text import OpenText
  from ..models.queued_turn import QueuedTurn
  from ..models.session import Session
  from ..models.session_usage import SessionUsage





T = TypeVar("T", bound="SessionPresent")



@_attrs_define
class SessionPresent:
    """ `GET /v1/rooms/{roomId}/sessions/{sessionId}/present`: the session as it is now. With the room
    WebSocket opened at `after=headSeq` and the session's tail read with `…/events?before=headSeq+1`,
    a client has everything, once: what this says includes every event through `headSeq`.

        Attributes:
            commands (list[CommandInfo]): The agent's commands, as its latest `commands.updated` said (since the server
                started).
            head_seq (int): The room's head when this was read: everything above includes every event through it.
            open_ (list[OpenText]): What the running turn is streaming: each message or reasoning not completed yet, with
                its
                text so far (at most 256 KiB of it), oldest first.
            pending (list[Interaction]): Interactions waiting for an answer, oldest first (as `GET …/interactions`).
            queue (list[QueuedTurn]): Follow-ups waiting for the running turn, first to start first (as `GET …/queue`).
            session (Session): A session as the contract shows it.
            usage (SessionUsage): A session's usage (`GET …/sessions/{id}/usage`).
            goal (Goal | None | Unset):
            plan (CurrentPlan | None | Unset):
     """

    commands: list[CommandInfo]
    head_seq: int
    open_: list[OpenText]
    pending: list[Interaction]
    queue: list[QueuedTurn]
    session: Session
    usage: SessionUsage
    goal: Goal | None | Unset = UNSET
    plan: CurrentPlan | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.command_info import CommandInfo # noqa: PLC0415
        from ..models.current_plan import CurrentPlan # noqa: PLC0415
        from ..models.goal import Goal # noqa: PLC0415
        from ..models.interaction import Interaction # noqa: PLC0415
        from ..models.open_text import OpenText # noqa: PLC0415
        from ..models.queued_turn import QueuedTurn # noqa: PLC0415
        from ..models.session import Session # noqa: PLC0415
        from ..models.session_usage import SessionUsage # noqa: PLC0415
        commands = []
        for commands_item_data in self.commands:
            commands_item = commands_item_data.to_dict()
            commands.append(commands_item)



        head_seq = self.head_seq

        open_ = []
        for open_item_data in self.open_:
            open_item = open_item_data.to_dict()
            open_.append(open_item)



        pending = []
        for pending_item_data in self.pending:
            pending_item = pending_item_data.to_dict()
            pending.append(pending_item)



        queue = []
        for queue_item_data in self.queue:
            queue_item = queue_item_data.to_dict()
            queue.append(queue_item)



        session = self.session.to_dict()

        usage = self.usage.to_dict()

        goal: dict[str, Any] | None | Unset
        if isinstance(self.goal, Unset):
            goal = UNSET
        elif isinstance(self.goal, Goal):
            goal = self.goal.to_dict()
        else:
            goal = self.goal

        plan: dict[str, Any] | None | Unset
        if isinstance(self.plan, Unset):
            plan = UNSET
        elif isinstance(self.plan, CurrentPlan):
            plan = self.plan.to_dict()
        else:
            plan = self.plan


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "commands": commands,
            "headSeq": head_seq,
            "open": open_,
            "pending": pending,
            "queue": queue,
            "session": session,
            "usage": usage,
        })
        if goal is not UNSET:
            field_dict["goal"] = goal
        if plan is not UNSET:
            field_dict["plan"] = plan

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.command_info import CommandInfo # noqa: PLC0415
        from ..models.current_plan import CurrentPlan # noqa: PLC0415
        from ..models.goal import Goal # noqa: PLC0415
        from ..models.interaction import Interaction # noqa: PLC0415
        from ..models.open_text import OpenText # noqa: PLC0415
        from ..models.queued_turn import QueuedTurn # noqa: PLC0415
        from ..models.session import Session # noqa: PLC0415
        from ..models.session_usage import SessionUsage # noqa: PLC0415
        d = dict(src_dict)
        commands = []
        _commands = d.pop("commands")
        for commands_item_data in (_commands):
            commands_item = CommandInfo.from_dict(commands_item_data)



            commands.append(commands_item)


        head_seq = d.pop("headSeq")

        open_ = []
        _open_ = d.pop("open")
        for open_item_data in (_open_):
            open_item = OpenText.from_dict(open_item_data)



            open_.append(open_item)


        pending = []
        _pending = d.pop("pending")
        for pending_item_data in (_pending):
            pending_item = Interaction.from_dict(pending_item_data)



            pending.append(pending_item)


        queue = []
        _queue = d.pop("queue")
        for queue_item_data in (_queue):
            queue_item = QueuedTurn.from_dict(queue_item_data)



            queue.append(queue_item)


        session = Session.from_dict(d.pop("session"))




        usage = SessionUsage.from_dict(d.pop("usage"))




        def _parse_goal(data: object) -> Goal | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                goal_type_0 = Goal.from_dict(data)



                return goal_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Goal | None | Unset, data)

        goal = _parse_goal(d.pop("goal", UNSET))


        def _parse_plan(data: object) -> CurrentPlan | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                plan_type_0 = CurrentPlan.from_dict(data)



                return plan_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CurrentPlan | None | Unset, data)

        plan = _parse_plan(d.pop("plan", UNSET))


        session_present = cls(
            commands=commands,
            head_seq=head_seq,
            open_=open_,
            pending=pending,
            queue=queue,
            session=session,
            usage=usage,
            goal=goal,
            plan=plan,
        )


        session_present.additional_properties = d
        return session_present

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
