from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.decision import Decision
from ..models.interaction_kind import InteractionKind
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.agent_option import AgentOption
  from ..models.question import Question





T = TypeVar("T", bound="Interaction")



@_attrs_define
class Interaction:
    """ A pending interaction as `GET .../interactions` lists it.

        Attributes:
            kind (InteractionKind):
            options (list[Decision]):
            request_id (str):
            title (str):
            requested_at_ms (int):
            session_id (str):
            agent_options (list[AgentOption] | Unset): The choices the agent itself offers (ACP permission options): an
                answer may name one with
                `optionId`, together with the decision it stands for.
            call_id (None | str | Unset): The call this request is about, when there is one.
            command (None | str | Unset):
            cwd (None | str | Unset):
            detail (None | str | Unset):
            diff (None | str | Unset):
            questions (list[Question] | Unset):
            turn_id (None | str | Unset):
     """

    kind: InteractionKind
    options: list[Decision]
    request_id: str
    title: str
    requested_at_ms: int
    session_id: str
    agent_options: list[AgentOption] | Unset = UNSET
    call_id: None | str | Unset = UNSET
    command: None | str | Unset = UNSET
    cwd: None | str | Unset = UNSET
    detail: None | str | Unset = UNSET
    diff: None | str | Unset = UNSET
    questions: list[Question] | Unset = UNSET
    turn_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.agent_option import AgentOption # noqa: PLC0415
        from ..models.question import Question # noqa: PLC0415
        kind = self.kind.value

        options = []
        for options_item_data in self.options:
            options_item = options_item_data.value
            options.append(options_item)



        request_id = self.request_id

        title = self.title

        requested_at_ms = self.requested_at_ms

        session_id = self.session_id

        agent_options: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.agent_options, Unset):
            agent_options = []
            for agent_options_item_data in self.agent_options:
                agent_options_item = agent_options_item_data.to_dict()
                agent_options.append(agent_options_item)



        call_id: None | str | Unset
        if isinstance(self.call_id, Unset):
            call_id = UNSET
        else:
            call_id = self.call_id

        command: None | str | Unset
        if isinstance(self.command, Unset):
            command = UNSET
        else:
            command = self.command

        cwd: None | str | Unset
        if isinstance(self.cwd, Unset):
            cwd = UNSET
        else:
            cwd = self.cwd

        detail: None | str | Unset
        if isinstance(self.detail, Unset):
            detail = UNSET
        else:
            detail = self.detail

        diff: None | str | Unset
        if isinstance(self.diff, Unset):
            diff = UNSET
        else:
            diff = self.diff

        questions: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.questions, Unset):
            questions = []
            for questions_item_data in self.questions:
                questions_item = questions_item_data.to_dict()
                questions.append(questions_item)



        turn_id: None | str | Unset
        if isinstance(self.turn_id, Unset):
            turn_id = UNSET
        else:
            turn_id = self.turn_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "kind": kind,
            "options": options,
            "requestId": request_id,
            "title": title,
            "requestedAtMs": requested_at_ms,
            "sessionId": session_id,
        })
        if agent_options is not UNSET:
            field_dict["agentOptions"] = agent_options
        if call_id is not UNSET:
            field_dict["callId"] = call_id
        if command is not UNSET:
            field_dict["command"] = command
        if cwd is not UNSET:
            field_dict["cwd"] = cwd
        if detail is not UNSET:
            field_dict["detail"] = detail
        if diff is not UNSET:
            field_dict["diff"] = diff
        if questions is not UNSET:
            field_dict["questions"] = questions
        if turn_id is not UNSET:
            field_dict["turnId"] = turn_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.agent_option import AgentOption # noqa: PLC0415
        from ..models.question import Question # noqa: PLC0415
        d = dict(src_dict)
        kind = InteractionKind(d.pop("kind"))




        options = []
        _options = d.pop("options")
        for options_item_data in (_options):
            options_item = Decision(options_item_data)



            options.append(options_item)


        request_id = d.pop("requestId")

        title = d.pop("title")

        requested_at_ms = d.pop("requestedAtMs")

        session_id = d.pop("sessionId")

        _agent_options = d.pop("agentOptions", UNSET)
        agent_options: list[AgentOption] | Unset = UNSET
        if _agent_options is not UNSET:
            agent_options = []
            for agent_options_item_data in _agent_options:
                agent_options_item = AgentOption.from_dict(agent_options_item_data)



                agent_options.append(agent_options_item)


        def _parse_call_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        call_id = _parse_call_id(d.pop("callId", UNSET))


        def _parse_command(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        command = _parse_command(d.pop("command", UNSET))


        def _parse_cwd(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cwd = _parse_cwd(d.pop("cwd", UNSET))


        def _parse_detail(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        detail = _parse_detail(d.pop("detail", UNSET))


        def _parse_diff(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        diff = _parse_diff(d.pop("diff", UNSET))


        _questions = d.pop("questions", UNSET)
        questions: list[Question] | Unset = UNSET
        if _questions is not UNSET:
            questions = []
            for questions_item_data in _questions:
                questions_item = Question.from_dict(questions_item_data)



                questions.append(questions_item)


        def _parse_turn_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        turn_id = _parse_turn_id(d.pop("turnId", UNSET))


        interaction = cls(
            kind=kind,
            options=options,
            request_id=request_id,
            title=title,
            requested_at_ms=requested_at_ms,
            session_id=session_id,
            agent_options=agent_options,
            call_id=call_id,
            command=command,
            cwd=cwd,
            detail=detail,
            diff=diff,
            questions=questions,
            turn_id=turn_id,
        )


        interaction.additional_properties = d
        return interaction

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
