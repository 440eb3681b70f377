"""The hand-written helpers of ensemble_client.session against the real server: run_turn's result,
interactions answered through its callback, its timeout and errors, and session_events' filter."""

from __future__ import annotations

import asyncio
import time

import pytest

from ensemble_client import AuthenticatedClient
from ensemble_client.models import (
    AnswerRequest,
    AnswerRequestAnswers,
    CallCompletedEvent,
    CallStartedEvent,
    CallStatus,
    Decision,
    InteractionKind,
    InteractionRequestedEvent,
    InteractionResolvedEvent,
    MessageDeltaEvent,
    ResolvedBy,
    Scope,
    SubmitTurnRequest,
    TextInput,
    TextInputType,
    TurnCanceledEvent,
    TurnCompletedEvent,
    TurnFailedEvent,
    TurnStartedEvent,
)
from ensemble_client.room import Event, RoomStream
from ensemble_client.session import (
    ApiError,
    InteractionAnswer,
    InteractionRequired,
    TurnResult,
    TurnTimeout,
    reply_text,
    run_turn,
    session_events,
)

from .conftest import Server
from .helpers import WAIT, Api


def check_events(result: TurnResult, sid: str) -> None:
    """The result's events are the turn's, from turn.started to its terminal event, seqs rising."""
    events = result.events
    assert isinstance(events[0], TurnStartedEvent) and events[0].payload.turn_id == result.turn_id
    assert isinstance(events[-1], (TurnCompletedEvent, TurnFailedEvent, TurnCanceledEvent))
    assert result.end is events[-1]
    assert all(e.session_id == sid and e.turn_id == result.turn_id for e in events)
    seqs = [e.seq for e in events]
    assert seqs == sorted(set(seqs)), seqs


async def logged_turn(api: Api, sid: str, turn: str) -> list[str]:
    """The event ids of the turn in the room's log (over REST)."""
    events, _, _ = await api.events()
    return [e.event_id for e in events if e.session_id == sid and e.turn_id == turn]


async def test_run_turn_returns_the_reply_status_and_every_event(server: Server) -> None:
    room = "helpers-reply"
    async with AuthenticatedClient(base_url=server.base_url, token=server.token) as client:
        api = Api(client, room)
        sid = (await api.start("s")).session_id
        streamed: list[Event] = []
        result = await run_turn(
            client, server.base_url, server.token, room, sid, "hello\n/tool grep -n TODO", on_event=streamed.append
        )
        assert (result.status, result.reply) == ("completed", "You said: hello")
        assert (result.room_id, result.session_id) == (room, sid)
        assert result.error is None and result.reason is None
        check_events(result, sid)
        # Nothing missed: exactly the turn's events in the room's log, each once, in order.
        assert [e.event_id for e in result.events] == await logged_turn(api, sid, result.turn_id)
        assert [e.event_id for e in streamed] == [e.event_id for e in result.events]
        kinds = {type(e) for e in result.events}
        assert {CallStartedEvent, CallCompletedEvent, MessageDeltaEvent} <= kinds
        assert "".join(e.payload.text for e in result.events if isinstance(e, MessageDeltaEvent)) == result.reply
        assert reply_text(result.events) == result.reply

        # Input items, and a second turn: only its own events.
        second = await run_turn(
            client,
            server.base_url,
            server.token,
            room,
            sid,
            [TextInput(type_=TextInputType.TEXT, text="one"), TextInput(type_=TextInputType.TEXT, text="two")],
        )
        assert second.status == "completed" and second.turn_id != result.turn_id
        assert "one" in second.reply and "two" in second.reply and "hello" not in second.reply
        check_events(second, sid)

        failed = await run_turn(client, server.base_url, server.token, room, sid, "/fail on purpose")
        assert failed.status == "failed" and isinstance(failed.end, TurnFailedEvent)
        assert failed.error is not None and failed.error.code == "scripted_failure"
        check_events(failed, sid)


async def test_run_turn_reports_a_canceled_turn(server: Server) -> None:
    room = "helpers-cancel"
    async with AuthenticatedClient(base_url=server.base_url, token=server.token) as client:
        api = Api(client, room)
        sid = (await api.start("s")).session_id
        streaming = asyncio.Event()
        deltas: list[str] = []

        def on_event(event: Event) -> None:
            if isinstance(event, MessageDeltaEvent):
                deltas.append(event.payload.text)
                if "chunk 3" in "".join(deltas):
                    streaming.set()

        task = asyncio.create_task(
            run_turn(client, server.base_url, server.token, room, sid, "/slow 20\n/chunks 500", on_event=on_event)
        )
        await asyncio.wait_for(streaming.wait(), WAIT)
        canceled_turn = (await api.cancel(sid)).turn_id
        result = await asyncio.wait_for(task, WAIT)
        assert (result.status, result.reason, result.turn_id) == ("canceled", "interrupted", canceled_turn)
        assert result.reply.startswith("chunk 1 chunk 2 chunk 3") and "chunk 500" not in result.reply
        check_events(result, sid)


async def test_an_approval_answered_through_the_callback(server: Server) -> None:
    room = "helpers-approval"
    async with AuthenticatedClient(base_url=server.base_url, token=server.token) as client:
        api = Api(client, room)
        sid = (await api.start("s")).session_id
        asked: list[InteractionRequestedEvent] = []

        def accept(event: InteractionRequestedEvent) -> InteractionAnswer:
            asked.append(event)
            return Decision.ACCEPT

        result = await run_turn(client, server.base_url, server.token, room, sid, "/run true", on_interaction=accept)
        assert (result.status, result.reply) == ("completed", "The command `true` ran.")
        assert [(e.payload.kind, e.payload.command, e.turn_id) for e in asked] == [
            (InteractionKind.COMMANDAPPROVAL, "true", result.turn_id)
        ]
        resolved = [e for e in result.events if isinstance(e, InteractionResolvedEvent)]
        assert [(r.payload.request_id, r.payload.decision, r.payload.resolved_by) for r in resolved] == [
            (asked[0].payload.request_id, Decision.ACCEPT, ResolvedBy.CLIENT)
        ]
        done = [e for e in result.events if isinstance(e, CallCompletedEvent)]
        assert [(c.payload.status, c.payload.exit_code) for c in done] == [(CallStatus.COMPLETED, 0)]
        check_events(result, sid)
        assert (await api.interactions(sid)).data == []

        # An async callback declining: the command does not run.
        declined: list[str] = []

        async def decline(event: InteractionRequestedEvent) -> InteractionAnswer:
            declined.append(event.payload.request_id)
            return Decision.DECLINE

        result = await run_turn(
            client, server.base_url, server.token, room, sid, "/run rm -rf build", on_interaction=decline
        )
        assert (result.status, result.reply) == ("completed", "The command `rm -rf build` was declined.")
        assert len(declined) == 1
        assert not any(isinstance(e, (CallStartedEvent, CallCompletedEvent)) for e in result.events)
        resolved = [e for e in result.events if isinstance(e, InteractionResolvedEvent)]
        assert [(r.payload.request_id, r.payload.decision) for r in resolved] == [(declined[0], Decision.DECLINE)]

        # `cancel` ends the turn canceled; a question is answered with a full AnswerRequest.
        result = await run_turn(
            client, server.base_url, server.token, room, sid, "/run make", on_interaction=lambda e: Decision.CANCEL
        )
        assert (result.status, result.reason) == ("canceled", "declined")

        def blue(event: InteractionRequestedEvent) -> InteractionAnswer:
            assert event.payload.kind == InteractionKind.USERINPUT
            answers = AnswerRequestAnswers()
            answers["answer"] = "blue"
            return AnswerRequest(decision=Decision.ACCEPT, answers=answers)

        result = await run_turn(client, server.base_url, server.token, room, sid, "/ask Which colour?", on_interaction=blue)
        assert result.status == "completed" and "blue" in result.reply


async def test_an_interaction_left_to_another_client_or_unanswered(server: Server) -> None:
    room = "helpers-unanswered"
    async with AuthenticatedClient(base_url=server.base_url, token=server.token) as client:
        api = Api(client, room)
        sid = (await api.start("s")).session_id

        # The callback returns None: run_turn keeps waiting while someone else answers.
        seen: asyncio.Queue[InteractionRequestedEvent] = asyncio.Queue()

        def later(event: InteractionRequestedEvent) -> None:
            seen.put_nowait(event)

        task = asyncio.create_task(
            run_turn(client, server.base_url, server.token, room, sid, "/run make lint", on_interaction=later)
        )
        event = await asyncio.wait_for(seen.get(), WAIT)
        assert not task.done()
        await api.answer(sid, event.payload.request_id, AnswerRequest(decision=Decision.ACCEPT))
        result = await asyncio.wait_for(task, WAIT)
        assert (result.status, result.reply) == ("completed", "The command `make lint` ran.")

        # No callback: InteractionRequired, and the turn still waits on the server.
        with pytest.raises(InteractionRequired) as info:
            await run_turn(client, server.base_url, server.token, room, sid, "/run make deploy", timeout=WAIT)
        exc = info.value
        assert exc.event.payload.command == "make deploy" and exc.request_id == exc.event.payload.request_id
        assert isinstance(exc.events[0], TurnStartedEvent) and exc.events[-1] is exc.event
        pending = await api.interactions(sid)
        assert [i.request_id for i in pending.data] == [exc.request_id]
        assert (await api.session(sid)).active_turn_id == exc.turn_id
        assert (await api.cancel(sid)).turn_id == exc.turn_id


async def test_run_turn_times_out(server: Server) -> None:
    room = "helpers-timeout"
    async with AuthenticatedClient(base_url=server.base_url, token=server.token) as client:
        api = Api(client, room)
        sid = (await api.start("s")).session_id
        began = time.monotonic()
        with pytest.raises(TurnTimeout) as info:
            await run_turn(client, server.base_url, server.token, room, sid, "/hang", timeout=2.0)
        elapsed = time.monotonic() - began
        assert isinstance(info.value, TimeoutError) and info.value.timeout == 2.0
        assert 2.0 <= elapsed < 2.0 + WAIT
        # The turn runs on: it is the session's active turn until canceled.
        assert info.value.turn_id is not None
        assert (await api.session(sid)).active_turn_id == info.value.turn_id
        assert all(e.turn_id == info.value.turn_id for e in info.value.events)

        # A second submit while it runs is refused: ApiError with the server's code.
        with pytest.raises(ApiError) as refused:
            await run_turn(client, server.base_url, server.token, room, sid, "hello", timeout=WAIT)
        assert (refused.value.status, refused.value.code) == (409, "turn_active")
        assert (await api.cancel(sid)).turn_id == info.value.turn_id

        with pytest.raises(ApiError) as missing:
            await run_turn(client, server.base_url, server.token, room, "no-such-session", "hello", timeout=WAIT)
        assert missing.value.status == 404 and missing.value.error is not None


async def test_a_duplicate_submit_returns_the_same_turn_from_the_log(server: Server) -> None:
    room = "helpers-duplicate"
    async with AuthenticatedClient(base_url=server.base_url, token=server.token) as client:
        api = Api(client, room)
        sid = (await api.start("s")).session_id

        def body() -> SubmitTurnRequest:
            return SubmitTurnRequest(
                input_=[TextInput(type_=TextInputType.TEXT, text="only once")], client_submit_id="submit-1"
            )

        first = await run_turn(client, server.base_url, server.token, room, sid, body())
        again = await run_turn(client, server.base_url, server.token, room, sid, body(), timeout=WAIT)
        assert again.turn_id == first.turn_id and again.status == first.status == "completed"
        assert [e.event_id for e in again.events] == [e.event_id for e in first.events]
        assert again.reply == first.reply == "You said: only once"


async def test_run_turn_in_a_side_conversation(server: Server) -> None:
    room = "helpers-side"
    async with AuthenticatedClient(base_url=server.base_url, token=server.token) as client:
        api = Api(client, room)
        sid = (await api.start("s")).session_id
        await run_turn(client, server.base_url, server.token, room, sid, "hello")
        side = (await api.open_side(sid, "why-1", "s-side")).session.session_id
        result = await run_turn(client, server.base_url, server.token, room, side, "why?")
        assert (result.status, result.reply) == ("completed", "You said: why?")
        check_events(result, side)
        side_log, _ = await api.side_events(side)
        assert [e.event_id for e in result.events] == [e.event_id for e in side_log if e.turn_id == result.turn_id]


async def test_session_events_yields_one_sessions_events(server: Server) -> None:
    room = "helpers-two"
    async with AuthenticatedClient(base_url=server.base_url, token=server.token) as client:
        api = Api(client, room)
        a = (await api.start("a")).session_id
        b = (await api.start("b")).session_id
        # Both sessions stream at once, so their events interleave in the room's log.
        ra, rb = await asyncio.gather(
            run_turn(client, server.base_url, server.token, room, a, "/slow 5\n/chunks 30"),
            run_turn(client, server.base_url, server.token, room, b, "/slow 5\n/chunks 30\nfrom b"),
        )
        assert ra.status == rb.status == "completed"
        log, _, head = await api.events()
        a_seqs = [e.seq for e in log if e.session_id == a]
        assert any(e.session_id == b and a_seqs[0] < e.seq < a_seqs[-1] for e in log), "no interleaving to filter"

        async with RoomStream(server.base_url, server.token, room, after=0) as stream:
            got: list[Event] = []
            async for event in session_events(stream, a):
                got.append(event)
                if event.seq == a_seqs[-1]:
                    break
        assert [e.event_id for e in got] == [e.event_id for e in log if e.session_id == a]
        assert {e.session_id for e in got} == {a}
        assert "from b" not in reply_text(got)

        # With a turn id: only that turn's events.
        async with RoomStream(server.base_url, server.token, room, after=0) as stream:
            turn: list[Event] = []
            async for event in session_events(stream, b, turn_id=rb.turn_id):
                turn.append(event)
                if isinstance(event, TurnCompletedEvent):
                    break
        assert [e.event_id for e in turn] == [e.event_id for e in rb.events]
        assert reply_text(turn).endswith("You said: from b")


async def test_session_events_follows_a_side_conversation_live(server: Server) -> None:
    room = "helpers-side-live"
    async with AuthenticatedClient(base_url=server.base_url, token=server.token) as client:
        api = Api(client, room)
        sid = (await api.start("s")).session_id
        side = (await api.open_side(sid, "side-1", "s-aside")).session.session_id
        async with RoomStream(server.base_url, server.token, room, after=None) as stream:
            turn = (await api.turn(side, "aside")).turn_id
            source_turn = (await api.turn(sid, "main line")).turn_id
            got: list[Event] = []

            async def follow() -> None:
                async for event in session_events(stream, side):
                    got.append(event)
                    if isinstance(event, TurnCompletedEvent):
                        return

            await asyncio.wait_for(follow(), WAIT)
        assert {e.session_id for e in got} == {side} and got[-1].turn_id == turn
        assert reply_text(got) == "You said: aside"
        assert source_turn not in {e.turn_id for e in got}
        assert all(e.scope == Scope.SIDE for e in got)
