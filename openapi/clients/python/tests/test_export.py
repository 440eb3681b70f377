"""A room export through the client: JSON Lines text, a header, the session, every event, the end."""

from __future__ import annotations

import json

from ensemble_client import AuthenticatedClient
from ensemble_client.api.rooms import export_room
from ensemble_client.api.sessions import start_session
from ensemble_client.api.turns import submit_turn
from ensemble_client.models import (
    Session,
    StartSessionRequest,
    SubmitTurnRequest,
    TextInput,
    TextInputType,
    TurnAccepted,
    TurnCompletedEvent,
)
from ensemble_client.room import RoomStream
from ensemble_client.session import session_events

from .conftest import Server


async def test_a_room_exports_as_json_lines(server: Server) -> None:
    room, sid = "export-py", "x1"
    async with AuthenticatedClient(base_url=server.base_url, token=server.token) as api:
        started = await start_session.asyncio(room, client=api, body=StartSessionRequest(session_id=sid))
        assert isinstance(started, Session)
        async with RoomStream(server.base_url, server.token, room, after=0) as stream:
            body = SubmitTurnRequest(input_=[TextInput(type_=TextInputType.TEXT, text="hello")])
            turn = await submit_turn.asyncio(room, sid, client=api, body=body)
            assert isinstance(turn, TurnAccepted)
            async for event in session_events(stream, sid):
                if isinstance(event, TurnCompletedEvent) and event.payload.turn_id == turn.turn_id:
                    break
        text = await export_room.asyncio(room, client=api)
        assert isinstance(text, str)
        lines = [json.loads(line) for line in text.splitlines()]
        header, end = lines[0], lines[-1]
        assert header["format"] == "ensemble.export" and header["version"] == 1 and header["roomId"] == room
        assert [line["session"]["sessionId"] for line in lines if line.get("kind") == "session"] == [sid]
        seqs = [line["event"]["seq"] for line in lines if line.get("kind") == "event"]
        assert seqs == list(range(1, header["head"] + 1))
        assert end == {"kind": "end", "events": len(seqs)}
