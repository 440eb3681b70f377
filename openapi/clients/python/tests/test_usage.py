"""Usage and budgets through the client: a session's ledger per turn, the room's totals, and a
budget that, once reached, refuses the next turn with ``budget_exhausted`` until it is raised."""

from __future__ import annotations

from ensemble_client import AuthenticatedClient
from ensemble_client.api.sessions import start_session
from ensemble_client.api.turns import submit_turn
from ensemble_client.api.usage import room_usage, session_usage, set_session_budget
from ensemble_client.models import (
    Budget,
    BudgetExhaustedEvent,
    ErrorResponse,
    RoomUsage,
    Session,
    SessionUsage,
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


def text(t: str) -> list[TextInput]:
    return [TextInput(type_=TextInputType.TEXT, text=t)]


async def test_a_budget_stops_new_turns_until_raised(server: Server) -> None:
    room, sid = "usage-py", "u1"
    async with AuthenticatedClient(base_url=server.base_url, token=server.token) as api:
        started = await start_session.asyncio(room, client=api, body=StartSessionRequest(session_id=sid))
        assert isinstance(started, Session)
        set_to = await set_session_budget.asyncio(room, sid, client=api, body=Budget(max_tokens=20))
        assert isinstance(set_to, SessionUsage) and set_to.budget is not None and set_to.budget.max_tokens == 20
        async with RoomStream(server.base_url, server.token, room, after=0) as stream:
            turn = await submit_turn.asyncio(room, sid, client=api, body=SubmitTurnRequest(input_=text("/spend 25")))
            assert isinstance(turn, TurnAccepted)
            done, reached = False, None
            async for event in session_events(stream, sid):
                if isinstance(event, TurnCompletedEvent) and event.payload.turn_id == turn.turn_id:
                    done = True
                if isinstance(event, BudgetExhaustedEvent):
                    reached = event
                if done and reached is not None:
                    break
            assert reached is not None and reached.payload.scope == "session"
            assert reached.payload.budget.max_tokens == 20
        used = await session_usage.asyncio(room, sid, client=api)
        assert isinstance(used, SessionUsage)
        assert [t.turn_id for t in used.turns] == [turn.turn_id]
        assert used.state.exhausted and used.state.tokens >= 25
        refused = await submit_turn.asyncio_detailed(room, sid, client=api, body=SubmitTurnRequest(input_=text("more")))
        assert refused.status_code == 409
        assert isinstance(refused.parsed, ErrorResponse) and refused.parsed.error.code == "budget_exhausted"
        await set_session_budget.asyncio(room, sid, client=api, body=Budget(max_tokens=10_000))
        again = await submit_turn.asyncio(room, sid, client=api, body=SubmitTurnRequest(input_=text("more")))
        assert isinstance(again, TurnAccepted)
        total = await room_usage.asyncio(room, client=api)
        assert isinstance(total, RoomUsage)
        assert [line.session_id for line in total.sessions] == [sid]
        assert total.totals.output_tokens >= 25
