"""Tokens and roles against the real server: a viewer token made with the admin token follows its
room (its `hello` says `viewer`) but may not act (403 `forbidden`), reaches no other room (404), and
its stream ends with `TokenRevoked` (close code 4003), without reconnecting, when the token is
revoked or expires; events a request caused name their actor."""

from __future__ import annotations

import re
import time

import pytest

from ensemble_client import AuthenticatedClient
from ensemble_client.api.access import list_tokens, me
from ensemble_client.api.rooms import list_events
from ensemble_client.api.turns import submit_turn
from ensemble_client.models import (
    Actor,
    ErrorBodyDetails,
    HelloFrame,
    Me,
    MessageDeltaEvent,
    Role,
    SubmitTurnRequest,
    TextInput,
    TextInputType,
    TokenList,
    TurnCompletedEvent,
    TurnStartedEvent,
)
from ensemble_client.room import CLOSE_TOKEN_REVOKED, RoomRefused, RoomStream, TokenRevoked
from ensemble_client.session import ApiError, create_token, revoke_token, run_turn
from ensemble_client.types import Unset
from websockets.asyncio.client import ClientConnection

from .conftest import Server
from .helpers import WAIT, Api, RoomWatch, expect, expect_error

# The server closes a revoked token's sockets within a second (docs/api.md); a few seconds' slack.
REVOKE_WITHIN = 5.0


class CountingStream(RoomStream):
    """A RoomStream that counts its connection attempts (to prove it never reconnects)."""

    handshakes = 0

    async def _handshake(self) -> ClientConnection | None:
        self.handshakes += 1
        return await super()._handshake()


async def whoami(client: AuthenticatedClient) -> Me:
    return expect(await me.asyncio_detailed(client=client), 200, Me)


def hello_of(watch: RoomWatch) -> HelloFrame:
    hello = watch.frames[0]
    assert isinstance(hello, HelloFrame), hello
    return hello


async def test_a_viewer_follows_its_room_but_may_not_act(server: Server) -> None:
    room, sid = "access-viewer", "s"
    async with AuthenticatedClient(base_url=server.base_url, token=server.token) as admin:
        boss = await whoami(admin)
        assert boss.role == Role.ADMIN and boss.rooms == ["*"]
        info, secret = await create_token(admin, "viewer-bot", Role.VIEWER, [room])
        assert (info.name, info.role, info.rooms, info.active) == ("viewer-bot", Role.VIEWER, [room], True)
        assert info.created_by == boss.name
        assert re.fullmatch(r"ens_[0-9a-f]{64}", secret), secret
        listed = await list_tokens.asyncio_detailed(client=admin)
        assert info.id in [t.id for t in expect(listed, 200, TokenList).data]
        assert secret.encode() not in listed.content, "the secret is shown once, never listed"

        api = Api(admin, room)
        stream = RoomStream(server.base_url, secret, room, after=0)
        watch = RoomWatch(stream)
        try:
            # The admin starts a session and a turn; the viewer's stream sees all of it.
            await api.start(sid)
            turn = (await api.turn(sid, "hello")).turn_id
            end = await watch.turn_end(sid, turn)
            assert isinstance(end, TurnCompletedEvent)
            assert hello_of(watch).role == Role.VIEWER
            assert stream.role == Role.VIEWER
            events, _, _ = await api.events()
            assert [e.event_id for e in watch.events] == [e.event_id for e in events[: len(watch.events)]]

            # What a request caused names the token behind it; what the agent produced does not.
            started = await watch.wait_type(TurnStartedEvent, session=sid, turn=turn)
            assert isinstance(started.actor, Actor), started.to_dict()
            assert (started.actor.token_id, started.actor.name) == (boss.token_id, boss.name)
            deltas = [e for e in watch.of_turn(turn) if isinstance(e, MessageDeltaEvent)]
            assert deltas and all(isinstance(e.actor, Unset) or e.actor is None for e in deltas)

            async with AuthenticatedClient(base_url=server.base_url, token=secret) as viewer:
                who = await whoami(viewer)
                assert (who.token_id, who.name, who.role, who.rooms) == (info.id, "viewer-bot", Role.VIEWER, [room])
                # Reading is a viewer's; submitting a turn is not: 403 `forbidden`, saying the roles.
                await Api(viewer, room).events()
                body = SubmitTurnRequest(input_=[TextInput(type_=TextInputType.TEXT, text="may I?")])
                refused = expect_error(
                    await submit_turn.asyncio_detailed(room, sid, client=viewer, body=body), 403, "forbidden"
                )
                details = refused.error.details
                assert isinstance(details, ErrorBodyDetails)
                assert (details["requiredRole"], details["role"]) == ("operator", "viewer")
                # The helpers surface it as ApiError.
                with pytest.raises(ApiError) as raised:
                    await run_turn(viewer, server.base_url, secret, room, sid, "may I?", timeout=WAIT)
                assert (raised.value.status, raised.value.code) == (403, "forbidden")
                with pytest.raises(ApiError) as raised:
                    await create_token(viewer, "escalate", Role.ADMIN, ["*"])
                assert (raised.value.status, raised.value.code) == (403, "forbidden")
                # A room outside the token's rooms does not exist for it, over REST and WebSocket.
                elsewhere = await list_events.asyncio_detailed("access-elsewhere", client=viewer)
                expect_error(elsewhere, 404, "room_not_found")
                with pytest.raises(RoomRefused) as ws_refused:
                    async with RoomStream(server.base_url, secret, "access-elsewhere"):
                        pass
                assert ws_refused.value.status == 404
                assert ws_refused.value.error is not None and ws_refused.value.error.error.code == "room_not_found"
            # Nothing the viewer tried reached the session.
            assert [e.event_id for e in (await api.events())[0]] == [e.event_id for e in events]
            assert stream.reconnects == 0 and watch.error is None
        finally:
            await watch.stop()


async def test_revoking_a_token_ends_its_stream_with_token_revoked_without_reconnecting(server: Server) -> None:
    room, sid = "access-revoke", "s"
    async with AuthenticatedClient(base_url=server.base_url, token=server.token) as admin:
        info, secret = await create_token(admin, "revoked-viewer", "viewer", [room])
        api = Api(admin, room)
        # Reconnects would be immediate and many: a stream that retried would show it.
        stream = CountingStream(server.base_url, secret, room, after=0, backoff_initial=0.01, max_retries=50)
        watch = RoomWatch(stream)
        try:
            await api.start(sid)
            turn = (await api.turn(sid, "before the revocation")).turn_id
            await watch.turn_end(sid, turn)
            assert stream.role == Role.VIEWER and stream.handshakes == 1

            revoked = await revoke_token(admin, info.id)
            assert revoked.id == info.id and not revoked.active and isinstance(revoked.revoked_at_ms, int)
            begun = time.monotonic()
            error = await watch.finished(timeout=REVOKE_WITHIN)
            took = time.monotonic() - begun
        finally:
            await watch.stop()
        assert isinstance(error, TokenRevoked), repr(error)
        assert took < REVOKE_WITHIN, took
        assert error.close_code == CLOSE_TOKEN_REVOKED == 4003 and error.room_id == room
        assert error.last_seq == stream.last_seq == watch.events[-1].seq
        assert stream.handshakes == 1 and stream.reconnects == 0 and stream.closed
        with pytest.raises(StopAsyncIteration):
            await anext(stream)

        # The token is refused everywhere from now on; revoking again answers the same token.
        async with AuthenticatedClient(base_url=server.base_url, token=secret) as viewer:
            expect_error(await me.asyncio_detailed(client=viewer), 401, "unauthorized")
        with pytest.raises(RoomRefused) as refused:
            async with RoomStream(server.base_url, secret, room):
                pass
        assert refused.value.status == 401
        again = await revoke_token(admin, info.id)
        assert again.id == info.id and not again.active
        with pytest.raises(ApiError) as raised:
            await revoke_token(admin, "tok_does_not_exist")
        assert (raised.value.status, raised.value.code) == (404, "token_not_found")


async def test_an_expiring_token_ends_its_stream_the_same_way(server: Server) -> None:
    room, ttl = "access-expiry", 2
    async with AuthenticatedClient(base_url=server.base_url, token=server.token) as admin:
        info, secret = await create_token(admin, "short-lived", Role.OPERATOR, [room], ttl_secs=ttl)
        assert isinstance(info.expires_at_ms, int) and info.expires_at_ms > info.created_at_ms
    stream = CountingStream(server.base_url, secret, room, backoff_initial=0.01, max_retries=50)
    watch = RoomWatch(stream)
    try:
        error = await watch.finished(timeout=ttl + REVOKE_WITHIN)
    finally:
        await watch.stop()
    assert isinstance(error, TokenRevoked), repr(error)
    assert hello_of(watch).role == Role.OPERATOR
    assert stream.handshakes == 1 and stream.reconnects == 0 and stream.closed
