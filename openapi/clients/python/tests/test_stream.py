"""The room stream's reconnect semantics against the real server: forced drops mid-turn, a lagged
reader's resync, a server restart, history that is gone, refusals and bounded retries."""

from __future__ import annotations

import asyncio
import socket
import tempfile
from pathlib import Path

import pytest

from ensemble_client import AuthenticatedClient
from ensemble_client.api.rooms import list_events
from ensemble_client.models import (
    CommandsUpdatedEvent,
    ErrorBodyDetails,
    ErrorFrame,
    EventFrame,
    HelloFrame,
    MessageCompletedEvent,
    MessageDeltaEvent,
    PongFrame,
    TurnCompletedEvent,
    TurnStartedEvent,
)
from ensemble_client.room import (
    HistoryExpired,
    ResyncRequired,
    RetriesExhausted,
    RoomRefused,
    RoomStream,
    ServerFrame,
)

from .conftest import Server, run_server
from .helpers import WAIT, Api, RoomWatch, check_parsed, expect_error


def chunks(n: int) -> str:
    return " ".join(f"chunk {i}" for i in range(1, n + 1))


async def assert_exact_log(api: Api, watch: RoomWatch) -> None:
    """The stream yielded the room's log exactly: seqs 1..N, no gap, no duplicate, same events."""
    events, raw, head = await api.events()
    check_parsed(events, raw)
    seqs = [e.seq for e in watch.events]
    assert seqs == list(range(1, len(seqs) + 1)), f"gap or duplicate in {seqs}"
    assert [e.event_id for e in watch.events] == [e.event_id for e in events[: len(watch.events)]]


def assert_message(watch: RoomWatch, turn: str, text: str) -> None:
    """The turn's deltas reassemble exactly into its completed message, which is `text`."""
    deltas = "".join(e.payload.text for e in watch.of_turn(turn) if isinstance(e, MessageDeltaEvent))
    (done,) = [e for e in watch.of_turn(turn) if isinstance(e, MessageCompletedEvent)]
    assert deltas == done.payload.text == text


async def next_frame(stream: RoomStream) -> ServerFrame:
    return await asyncio.wait_for(anext(stream), WAIT)


async def test_forced_drops_mid_turn_lose_and_repeat_nothing(server: Server) -> None:
    room, sid, n = "drops", "s", 300
    stream = RoomStream(server.base_url, server.token, room, after=0, backoff_initial=0.01)
    cut_at = {20, 150, 400}  # the n-th message.delta of the turn
    deltas = 0

    def cut(frame: ServerFrame) -> None:
        # Abort the TCP connection under the stream, as a network failure would: frames already
        # received but not yet yielded are lost with it and must come again, once.
        nonlocal deltas
        if isinstance(frame, EventFrame) and isinstance(frame.event, MessageDeltaEvent):
            deltas += 1
            if deltas in cut_at:
                assert stream.connection is not None
                stream.connection.transport.abort()

    async with AuthenticatedClient(base_url=server.base_url, token=server.token) as client:
        api = Api(client, room)
        watch = RoomWatch(stream, on_frame=cut)
        try:
            await api.start(sid)
            await watch.wait_type(CommandsUpdatedEvent, session=sid)
            turn = (await api.turn(sid, f"/slow 2\n/chunks {n}")).turn_id
            end = await watch.turn_end(sid, turn)
            assert isinstance(end, TurnCompletedEvent)
            assert stream.reconnects == len(cut_at)
            assert stream.resyncs == 0
            assert_message(watch, turn, chunks(n))
            await assert_exact_log(api, watch)
            assert sum(isinstance(f, HelloFrame) for f in watch.frames) == 1, "later hellos are swallowed"
        finally:
            await watch.stop()


async def test_a_lagged_reader_is_resynced_and_catches_up_exactly() -> None:
    # A tiny per-connection queue and no chunk delay: a reader that does not read while the turn
    # streams falls behind, gets `resync` (`lagged`, close 4000) and reconnects by itself.
    with run_server("--ws-queue", "16", "--scripted-chunk-delay-ms", "0") as server:
        room, sid, n = "lag", "s", 3000
        async with AuthenticatedClient(base_url=server.base_url, token=server.token) as client:
            api = Api(client, room)
            await api.start(sid)
            slow = RoomStream(server.base_url, server.token, room, after=0)
            await slow.connect()
            # Another reader follows the turn to its end while the slow one reads nothing.
            follower = RoomWatch(RoomStream(server.base_url, server.token, room, after=0))
            try:
                turn = (await api.turn(sid, f"/chunks {n}")).turn_id
                await follower.turn_end(sid, turn)
                watch = RoomWatch(slow)
                await watch.turn_end(sid, turn)
                assert slow.resyncs >= 1 and slow.reconnects >= slow.resyncs
                assert_message(watch, turn, chunks(n))
                await assert_exact_log(api, watch)
                await assert_exact_log(api, follower)
                await watch.stop()
            finally:
                await follower.stop()
                await slow.close()


async def test_the_stream_survives_a_server_restart() -> None:
    with tempfile.TemporaryDirectory(prefix="ensemble-pytest-restart-") as tmp:
        root = Path(tmp)
        room, sid = "restart", "s"
        with run_server(root=root) as first:
            addr = first.addr
            stream = RoomStream(
                first.base_url, first.token, room, after=0, backoff_initial=0.05, backoff_max=0.5, max_retries=60
            )
            watch = RoomWatch(stream)
            async with AuthenticatedClient(base_url=first.base_url, token=first.token) as client:
                api = Api(client, room)
                await api.start(sid)
                turn = (await api.turn(sid, "before the restart")).turn_id
                await watch.turn_end(sid, turn)
        # The server drained and closed the socket (1001); the stream retries with backoff until
        # the next server listens on the same address with the same data.
        try:
            with run_server(root=root, listen=addr) as second:
                async with AuthenticatedClient(base_url=second.base_url, token=second.token) as client:
                    api = Api(client, room)
                    mark = watch.mark()
                    turn = (await api.turn(sid, "after the restart")).turn_id  # resumes the session
                    end = await watch.turn_end(sid, turn, since=mark)
                    assert isinstance(end, TurnCompletedEvent)
                    assert stream.reconnects >= 1
                    assert_message(watch, turn, "You said: after the restart")
                    await assert_exact_log(api, watch)
        finally:
            await watch.stop()


async def test_live_only_starts_at_the_head_and_answers_ping(server: Server) -> None:
    room, sid = "live", "s"
    async with AuthenticatedClient(base_url=server.base_url, token=server.token) as client:
        api = Api(client, room)
        await api.start(sid)
        async with RoomStream(server.base_url, server.token, room) as stream:
            hello = await next_frame(stream)
            assert isinstance(hello, HelloFrame) and hello.room_id == room
            assert [s.session_id for s in hello.sessions] == [sid]
            assert stream.last_seq == hello.head_seq >= 2
            turn = (await api.turn(sid, "hi")).turn_id
            first = await next_frame(stream)
            assert isinstance(first, EventFrame) and isinstance(first.event, TurnStartedEvent)
            assert first.event.seq == hello.head_seq + 1 and first.event.payload.turn_id == turn
            await stream.ping()
            while not isinstance(frame := await next_frame(stream), PongFrame):
                assert isinstance(frame, EventFrame)
            # A client frame the server does not understand: an `error` frame, the stream goes on.
            assert stream.connection is not None
            await stream.connection.send('{"type":"nonsense"}')
            while not isinstance(frame := await next_frame(stream), ErrorFrame):
                assert isinstance(frame, EventFrame)
            assert frame.code == "invalid_frame"
            await stream.ping()
            while not isinstance(frame := await next_frame(stream), PongFrame):
                assert isinstance(frame, EventFrame)
        assert stream.closed
        with pytest.raises(StopAsyncIteration):
            await anext(stream)


async def test_history_that_is_gone_is_raised_not_retried() -> None:
    with run_server("--retention-events", "5") as server:
        room, sid = "pruned", "s"
        async with AuthenticatedClient(base_url=server.base_url, token=server.token) as client:
            api = Api(client, room)
            follower = RoomWatch(RoomStream(server.base_url, server.token, room))
            try:
                await api.start(sid)
                turn = (await api.turn(sid, "one two three four five six")).turn_id
                await follower.turn_end(sid, turn)
            finally:
                await follower.stop()
            head = follower.events[-1].seq
            assert head > 5
            gone = expect_error(
                await list_events.asyncio_detailed(room, client=client, after=0), 410, "history_expired"
            )
            # Pruning is amortised (in steps of 1/8 of the budget): at least 5 events are kept.
            details = gone.error.details
            assert isinstance(details, ErrorBodyDetails) and details["headSeq"] == head
            assert 1 < details["oldestSeq"] <= head - 4

            stream = RoomStream(server.base_url, server.token, room, after=0, backoff_initial=0.01)
            async with stream:
                assert isinstance(await next_frame(stream), HelloFrame)
                with pytest.raises(HistoryExpired) as raised:
                    await next_frame(stream)
            assert raised.value.reason == "history_expired" and raised.value.head_seq == head
            assert raised.value.last_seq == 0 and stream.reconnects == 0 and stream.closed

            # Reload over REST, then follow from the head the error named.
            async with RoomStream(server.base_url, server.token, room, after=raised.value.head_seq) as again:
                assert isinstance(await next_frame(again), HelloFrame)
                await api.turn(sid, "again")
                frame = await next_frame(again)
                assert isinstance(frame, EventFrame) and frame.event.seq == head + 1


async def test_a_position_ahead_of_the_log_is_raised_not_retried(server: Server) -> None:
    room = "ahead"
    async with AuthenticatedClient(base_url=server.base_url, token=server.token) as client:
        await Api(client, room).start("s")
    stream = RoomStream(server.base_url, server.token, room, after=1_000_000, backoff_initial=0.01)
    async with stream:
        hello = await next_frame(stream)
        assert isinstance(hello, HelloFrame)
        with pytest.raises(ResyncRequired) as raised:
            await next_frame(stream)
    assert not isinstance(raised.value, HistoryExpired)
    assert raised.value.reason == "ahead_of_log" and raised.value.head_seq == hello.head_seq
    assert stream.reconnects == 0 and stream.closed


async def test_a_wrong_token_is_refused_at_once(server: Server) -> None:
    stream = RoomStream(server.base_url, "W" * 40, "refused", max_retries=50, backoff_initial=1.0)
    with pytest.raises(RoomRefused) as raised:
        async with asyncio.timeout(WAIT):
            async with stream:
                pass
    assert raised.value.status == 401
    assert raised.value.error is not None and raised.value.error.error.code == "unauthorized"
    assert stream.closed


async def test_retries_are_bounded() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # Nothing listens on that port now.
    stream = RoomStream(
        f"http://127.0.0.1:{port}", "T" * 40, "nowhere", max_retries=3, backoff_initial=0.01, backoff_max=0.05
    )
    with pytest.raises(RetriesExhausted) as raised:
        async with asyncio.timeout(WAIT):
            await stream.connect()
    assert raised.value.attempts == 4
    assert isinstance(raised.value.__cause__, OSError)
    assert stream.closed


async def test_close_from_another_task_ends_the_iteration(server: Server) -> None:
    stream = RoomStream(server.base_url, server.token, "quiet")
    got: list[ServerFrame] = []
    connected = asyncio.Event()

    async def consume() -> None:
        async for frame in stream:
            got.append(frame)
            connected.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(connected.wait(), WAIT)
    conn = stream.connection
    assert conn is not None and conn.subprotocol == "ensemble.v1"
    await stream.close()
    await asyncio.wait_for(task, WAIT)
    assert [type(f) for f in got] == [HelloFrame]
    assert conn.close_code == 1000
    await stream.close()  # idempotent
