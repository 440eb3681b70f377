"""Test helpers: the REST calls through the generated API functions (asserting the documented status
and model), and a room watcher that follows a `RoomStream` and lets tests wait on events."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import attrs

from ensemble_client import AuthenticatedClient
from ensemble_client.api.goals import clear_goal, get_goal, pause_goal, resume_goal, set_goal
from ensemble_client.api.interactions import answer_interaction, list_interactions
from ensemble_client.api.rooms import list_events
from ensemble_client.api.sessions import (
    close_session,
    get_session,
    release_session,
    resume_session,
    session_present,
    start_session,
)
from ensemble_client.api.sides import open_side, side_capabilities, side_events
from ensemble_client.api.turns import cancel_turn, submit_turn
from ensemble_client.models import (
    AnswerAccepted,
    AnswerRequest,
    CancelAccepted,
    ErrorResponse,
    EventFrame,
    EventList,
    Goal,
    InteractionList,
    OpenSideRequest,
    Session,
    SessionPresent,
    SetGoalRequest,
    SideCapabilities,
    SideEventFrame,
    SideOpened,
    StartSessionRequest,
    SubmitTurnRequest,
    TextInput,
    TextInputType,
    TurnAccepted,
    TurnCanceledEvent,
    TurnCompletedEvent,
    TurnFailedEvent,
)
from ensemble_client.room import EVENT_CLASSES, Event, RoomStream, ServerFrame
from ensemble_client.types import Response

T = TypeVar("T")
WAIT = 15.0


def expect(response: Response[Any], status: int, model: type[T]) -> T:
    """The response has `status` and parsed into `model` (else the test fails with the body)."""
    assert response.status_code == status, f"HTTP {response.status_code}: {response.content!r}"
    parsed = response.parsed
    if model is type(None):
        assert parsed is None, parsed
        return parsed  # type: ignore[return-value]
    assert isinstance(parsed, model), f"expected {model.__name__}, got {type(parsed).__name__}: {response.content!r}"
    return parsed


def expect_error(response: Response[Any], status: int, code: str) -> ErrorResponse:
    error = expect(response, status, ErrorResponse)
    assert error.error.code == code, response.content
    return error


def undocumented_fields(model: Any, path: str = "") -> list[str]:
    """Properties the server sent that the document does not describe (a generated model keeps
    them in `additional_properties`), anywhere in a parsed model."""
    found: list[str] = []
    if attrs.has(type(model)):
        extra = getattr(model, "additional_properties", None)
        # Maps typed as `additionalProperties` (answers, tool input, details) are free-form by design.
        if extra and [f.name for f in attrs.fields(type(model))] != ["additional_properties"]:
            found += [f"{path}.{k}" for k in extra]
        for field in attrs.fields(type(model)):
            if field.name != "additional_properties":
                found += undocumented_fields(getattr(model, field.name), f"{path}.{field.name}")
    elif isinstance(model, list):
        for i, item in enumerate(model):
            found += undocumented_fields(item, f"{path}[{i}]")
    return found


class Api:
    """The REST API of one room, through the generated client only."""

    def __init__(self, client: AuthenticatedClient, room: str) -> None:
        self.client = client
        self.room = room

    async def start(self, session_id: str) -> Session:
        r = await start_session.asyncio_detailed(
            self.room, client=self.client, body=StartSessionRequest(session_id=session_id)
        )
        return expect(r, 201, Session)

    async def session(self, session_id: str) -> Session:
        return expect(await get_session.asyncio_detailed(self.room, session_id, client=self.client), 200, Session)

    async def turn(self, session_id: str, text: str, *, steer: bool | None = None) -> TurnAccepted:
        body = SubmitTurnRequest(input_=[TextInput(text=text, type_=TextInputType.TEXT)])
        if steer is not None:
            body.steer = steer
        r = await submit_turn.asyncio_detailed(self.room, session_id, client=self.client, body=body)
        return expect(r, 202, TurnAccepted)

    async def cancel(self, session_id: str) -> CancelAccepted:
        r = await cancel_turn.asyncio_detailed(self.room, session_id, client=self.client)
        return expect(r, 202, CancelAccepted)

    async def interactions(self, session_id: str) -> InteractionList:
        r = await list_interactions.asyncio_detailed(self.room, session_id, client=self.client)
        return expect(r, 200, InteractionList)

    async def answer(self, session_id: str, request_id: str, body: AnswerRequest) -> AnswerAccepted:
        r = await answer_interaction.asyncio_detailed(self.room, session_id, request_id, client=self.client, body=body)
        return expect(r, 200, AnswerAccepted)

    async def set_goal(self, session_id: str, objective: str, submit_id: str) -> Goal:
        body = SetGoalRequest(objective=objective, client_submit_id=submit_id)
        r = await set_goal.asyncio_detailed(self.room, session_id, client=self.client, body=body)
        return expect(r, 200, Goal)

    async def goal(self, session_id: str) -> Goal:
        return expect(await get_goal.asyncio_detailed(self.room, session_id, client=self.client), 200, Goal)

    async def pause_goal(self, session_id: str, submit_id: str) -> Goal:
        r = await pause_goal.asyncio_detailed(self.room, session_id, client=self.client, client_submit_id=submit_id)
        return expect(r, 200, Goal)

    async def resume_goal(self, session_id: str, submit_id: str) -> Goal:
        r = await resume_goal.asyncio_detailed(self.room, session_id, client=self.client, client_submit_id=submit_id)
        return expect(r, 200, Goal)

    async def clear_goal(self, session_id: str, submit_id: str) -> None:
        r = await clear_goal.asyncio_detailed(self.room, session_id, client=self.client, client_submit_id=submit_id)
        expect(r, 204, type(None))

    async def release(self, session_id: str) -> None:
        expect(await release_session.asyncio_detailed(self.room, session_id, client=self.client), 204, type(None))

    async def resume(self, session_id: str) -> Session:
        return expect(await resume_session.asyncio_detailed(self.room, session_id, client=self.client), 200, Session)

    async def close(self, session_id: str) -> None:
        expect(await close_session.asyncio_detailed(self.room, session_id, client=self.client), 204, type(None))

    async def side_capabilities(self, session_id: str) -> SideCapabilities:
        r = await side_capabilities.asyncio_detailed(self.room, session_id, client=self.client)
        return expect(r, 200, SideCapabilities)

    async def open_side(self, session_id: str, request_id: str, side_id: str) -> SideOpened:
        body = OpenSideRequest(request_id=request_id, side_session_id=side_id)
        r = await open_side.asyncio_detailed(self.room, session_id, client=self.client, body=body)
        return expect(r, 201, SideOpened)

    async def events(self, *, after: int = 0, limit: int = 1000) -> tuple[list[Event], list[dict[str, Any]], int]:
        """Every durable event after `after`, paged with `after`/`limit`: the parsed events, the
        raw JSON of each (to compare), and the head seq."""
        parsed: list[Event] = []
        raw: list[dict[str, Any]] = []
        head = 0
        while True:
            r = await list_events.asyncio_detailed(self.room, client=self.client, after=after, limit=limit)
            page = expect(r, 200, EventList)
            head = page.head_seq
            parsed += page.data
            raw += json.loads(r.content)["data"]
            assert len(page.data) <= limit
            if not page.data:
                return parsed, raw, head
            after = page.data[-1].seq

    async def side_events(
        self, side_id: str, *, after: int = 0, limit: int = 1000
    ) -> tuple[list[Event], list[dict[str, Any]]]:
        parsed: list[Event] = []
        raw: list[dict[str, Any]] = []
        while True:
            r = await side_events.asyncio_detailed(self.room, side_id, client=self.client, after=after, limit=limit)
            page = expect(r, 200, EventList)
            parsed += page.data
            raw += json.loads(r.content)["data"]
            if not page.data:
                return parsed, raw
            after = page.data[-1].seq


    async def session_tail(self, session_id: str, *, limit: int = 100) -> tuple[list[Event], list[dict[str, Any]]]:
        """A session's events read back from its tail (`before`, then each page's `prev`), oldest first."""
        parsed: list[Event] = []
        raw: list[dict[str, Any]] = []
        before = 2**63 - 1
        while True:
            r = await side_events.asyncio_detailed(self.room, session_id, client=self.client, before=before, limit=limit)
            page = expect(r, 200, EventList)
            assert len(page.data) <= limit
            parsed = [*page.data, *parsed]
            raw = [*json.loads(r.content)["data"], *raw]
            if not isinstance(page.prev, int):
                return parsed, raw
            before = page.prev

    async def present(self, session_id: str) -> SessionPresent:
        return expect(
            await session_present.asyncio_detailed(self.room, session_id, client=self.client), 200, SessionPresent
        )


def check_parsed(events: Sequence[Event], raw: Sequence[dict[str, Any]]) -> None:
    """Each event parsed into the class its `type` names (not another variant) and gives back
    exactly the JSON the server sent, with no property the document does not describe."""
    assert len(events) == len(raw)
    for event, data in zip(events, raw, strict=True):
        expected = EVENT_CLASSES[data["type"]]
        assert type(event) is expected, f"{data['type']} parsed as {type(event).__name__}: {data}"
        assert event.to_dict() == data, f"{type(event).__name__} does not round-trip: {data}"
        assert undocumented_fields(event) == [], f"undocumented fields {undocumented_fields(event)} in {data}"


Predicate = Callable[[Event], bool]


class RoomWatch:
    """Follows a room with a `RoomStream` in a task; tests wait on its events with timeouts."""

    def __init__(self, stream: RoomStream, *, on_frame: Callable[[ServerFrame], Any] | None = None) -> None:
        self.stream = stream
        self.frames: list[ServerFrame] = []
        self.events: list[Event] = []
        self.side_events: list[Event] = []
        self.error: BaseException | None = None
        self._on_frame = on_frame
        self._changed = asyncio.Condition()
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        try:
            async for frame in self.stream:
                self.frames.append(frame)
                if isinstance(frame, EventFrame):
                    self.events.append(frame.event)
                elif isinstance(frame, SideEventFrame):
                    self.side_events.append(frame.event)
                if self._on_frame is not None:
                    result = self._on_frame(frame)
                    if asyncio.iscoroutine(result):
                        await result
                async with self._changed:
                    self._changed.notify_all()
        except BaseException as exc:
            self.error = exc
            async with self._changed:
                self._changed.notify_all()
            raise

    def mark(self) -> int:
        """A position in the room's events: `wait(…, since=mark)` looks only at later ones."""
        return len(self.events)

    async def wait(self, pred: Predicate, *, since: int = 0, side: bool = False, timeout: float = WAIT) -> Event:
        """The first event (room or, with `side`, side-conversation event) from `since` on that
        matches `pred`, waiting for it at most `timeout` seconds."""
        found: list[Event] = []

        def ready() -> bool:
            if self.error is not None:
                raise AssertionError(f"the room stream failed: {self.error!r}")
            pool = self.side_events if side else self.events
            for event in pool[since:]:
                if pred(event):
                    found.append(event)
                    return True
            return False

        async with self._changed:
            try:
                await asyncio.wait_for(self._changed.wait_for(ready), timeout)
            except TimeoutError:
                pool = (self.side_events if side else self.events)[since:]
                seen = "\n".join(json.dumps(e.to_dict())[:300] for e in pool[-40:])
                raise AssertionError(
                    f"no matching event within {timeout}s; the last events since {since}:\n{seen}"
                ) from None
        return found[0]

    async def wait_type(
        self,
        cls: type[T],
        *,
        since: int = 0,
        session: str | None = None,
        turn: str | None = None,
        side: bool = False,
        timeout: float = WAIT,
    ) -> T:
        event = await self.wait(
            lambda e: (
                (session is None or e.session_id == session)
                and (turn is None or e.turn_id == turn)
                and isinstance(e, cls)
            ),
            since=since,
            side=side,
            timeout=timeout,
        )
        return event  # type: ignore[return-value]

    async def turn_end(self, session: str, turn: str, *, since: int = 0, side: bool = False) -> Event:
        """The turn's terminal event (completed, failed or canceled)."""
        return await self.wait(
            lambda e: (
                isinstance(e, (TurnCompletedEvent, TurnFailedEvent, TurnCanceledEvent))
                and e.session_id == session
                and e.payload.turn_id == turn
            ),
            since=since,
            side=side,
        )

    def of_turn(self, turn: str, *, side: bool = False) -> list[Event]:
        return [e for e in (self.side_events if side else self.events) if e.turn_id == turn]

    async def finished(self, timeout: float = WAIT) -> BaseException | None:
        """Waits (at most `timeout` seconds) for the stream to end by itself; its error, if any."""
        try:
            await asyncio.wait_for(asyncio.shield(self._task), timeout)
        except TimeoutError:
            if not self._task.done():
                raise AssertionError(f"the room stream did not end within {timeout}s") from None
        except Exception:
            pass  # the stream's error, kept in `self.error`
        return self.error

    async def stop(self) -> None:
        await self.stream.close()
        try:
            await asyncio.wait_for(self._task, WAIT)
        except BaseException:
            if self.error is None:
                raise
