"""A session's queue through the client: follow-ups queued while a turn runs, reordered, one
removed, and the rest starting in order once the running turn ends (announced by ``queue.updated``,
which shows each queued turn's place, size and the beginning of its text; ``get_queue`` has it all)."""

from __future__ import annotations

from ensemble_client import AuthenticatedClient
from ensemble_client.api.sessions import start_session
from ensemble_client.api.turns import cancel_turn, get_queue, remove_queued, reorder_queue, submit_turn
from ensemble_client.models import (
    QueueList,
    QueueOrder,
    QueueUpdatedEvent,
    Session,
    StartSessionRequest,
    SubmitTurnRequest,
    TextInput,
    TextInputType,
    TurnAccepted,
    TurnCompletedEvent,
)
from ensemble_client.room import RoomStream
from ensemble_client.session import reply_text, session_events

from .conftest import Server


def text(t: str) -> list[TextInput]:
    return [TextInput(type_=TextInputType.TEXT, text=t)]


async def test_follow_ups_wait_and_start_in_order(server: Server) -> None:
    room, sid = "queue-py", "q1"
    async with AuthenticatedClient(base_url=server.base_url, token=server.token) as api:
        started = await start_session.asyncio(room, client=api, body=StartSessionRequest(session_id=sid))
        assert isinstance(started, Session)
        async with RoomStream(server.base_url, server.token, room, after=0) as stream:
            running = await submit_turn.asyncio(room, sid, client=api, body=SubmitTurnRequest(input_=text("/hang")))
            assert isinstance(running, TurnAccepted) and not running.queued
            ids = []
            long = "second " + "x" * 2000
            for t in ["first", long, "third"]:
                a = await submit_turn.asyncio(room, sid, client=api, body=SubmitTurnRequest(input_=text(t), queue=True))
                assert isinstance(a, TurnAccepted) and a.queued
                ids.append(a.turn_id)
            order = [ids[2], ids[0], ids[1]]
            reordered = await reorder_queue.asyncio(room, sid, client=api, body=QueueOrder(order=order))
            assert isinstance(reordered, QueueList) and [q.turn_id for q in reordered.data] == order
            await remove_queued.asyncio_detailed(room, sid, ids[0], client=api)
            queue = await get_queue.asyncio(room, sid, client=api)
            assert isinstance(queue, QueueList) and [q.turn_id for q in queue.data] == [ids[2], ids[1]]
            assert queue.data[1].input_[0].text == long
            await cancel_turn.asyncio(room, sid, client=api)
            replies: dict[str, str] = {}
            reasons: list[str] = []
            events = []
            async for event in session_events(stream, sid):
                events.append(event)
                if isinstance(event, QueueUpdatedEvent):
                    reasons.append(event.payload.reason)
                    if event.payload.reason == "removed":
                        shown = event.payload.queue
                        assert [(q.turn_id, q.position) for q in shown] == [(ids[2], 0), (ids[1], 1)]
                        assert shown[0].preview == "third" and not shown[0].truncated
                        assert shown[1].truncated and len(shown[1].preview) == 256 and long.startswith(shown[1].preview)
                        assert event.payload.bytes_ == sum(q.bytes_ for q in shown)
                if isinstance(event, TurnCompletedEvent):
                    replies[event.payload.turn_id] = reply_text(e for e in events if e.turn_id == event.payload.turn_id)
                    if len(replies) == 2:
                        break
            assert list(replies) == [ids[2], ids[1]]
            assert "You said: third" in replies[ids[2]] and "You said: second" in replies[ids[1]]
            assert reasons == ["queued", "queued", "queued", "reordered", "removed", "started", "started"]
