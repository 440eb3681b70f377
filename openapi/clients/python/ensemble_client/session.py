"""Hand-written helpers over the generated client and the room stream: run a turn to its end,
follow one session's events, and make or revoke a token.

:func:`run_turn` submits a turn and waits for its terminal event (``turn.completed``,
``turn.failed`` or ``turn.canceled``), answering the turn's approvals and questions through a
callback; it returns a :class:`TurnResult` with the status, the agent's reply and the turn's
events. It opens its own :class:`~ensemble_client.room.RoomStream` *before* submitting (the
stream's ``hello`` fixes the room's head), so no event of the turn can be missed, and it looks
only at events of that session and that turn, whatever else happens in the room::

    from ensemble_client import AuthenticatedClient
    from ensemble_client.models import Decision
    from ensemble_client.session import run_turn

    async with AuthenticatedClient(base_url=url, token=token) as api:
        result = await run_turn(api, url, token, "demo", "s1", "/run make test",
                                on_interaction=lambda event: Decision.ACCEPT)
        print(result.status, result.reply)   # completed The command `make test` ran.

:func:`session_events` filters a stream's frames to one session's events (and, optionally, one
turn's)::

    async with RoomStream(url, token, "demo", after=0) as stream:
        async for event in session_events(stream, "s1"):
            ...

:func:`create_token` makes a token with a role for some rooms (with an admin token) and returns it
with its secret, which the server shows only this once; :func:`revoke_token` revokes one (its room
streams end with :class:`~ensemble_client.room.TokenRevoked`)::

    from ensemble_client.models import Role
    from ensemble_client.session import create_token, revoke_token

    async with AuthenticatedClient(base_url=url, token=admin_token) as admin:
        info, secret = await create_token(admin, "phone", Role.VIEWER, ["demo"], ttl_secs=7 * 86400)
        ...  # RoomStream(url, secret, "demo") follows the room; submitting a turn is 403 `forbidden`
        await revoke_token(admin, info.id)

Errors: a refused REST call raises :class:`ApiError` (``status``, ``code``, ``message``); a turn
that waits on an interaction nobody answers raises :class:`InteractionRequired` (without a
callback) or, like any turn that does not end in time, :class:`TurnTimeout`; the stream's own
errors (:class:`~ensemble_client.room.RoomRefused`, :class:`~ensemble_client.room.RetriesExhausted`,
:class:`~ensemble_client.room.TokenRevoked`, …) pass through. None of them cancels the turn on the
server: cancel it with ``ensemble_client.api.turns.cancel_turn`` if that is what you want.
"""

from __future__ import annotations

import asyncio
import base64
import inspect
import os
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias

from .api.access import create_token as _create_token
from .api.access import revoke_token as _revoke_token
from .api.interactions import answer_interaction
from .api.rooms import list_events
from .api.sides import side_events
from .api.turns import submit_turn
from .client import AuthenticatedClient
from .models import (
    AnswerRequest,
    CreatedToken,
    CreateToken,
    Decision,
    ErrorInfo,
    ErrorResponse,
    EventFrame,
    EventList,
    FileInput,
    ImageInput,
    ImageInputType,
    InteractionRequestedEvent,
    InteractionResolvedEvent,
    MessageCompletedEvent,
    Role,
    SideEventFrame,
    SubmitTurnRequest,
    TextInput,
    TextInputType,
    TokenInfo,
    TurnAccepted,
    TurnCanceledEvent,
    TurnCompletedEvent,
    TurnFailedEvent,
)
from .room import Event, RoomStream, RoomStreamError, ServerFrame
from .types import Response

__all__ = [
    "DEFAULT_TURN_TIMEOUT",
    "ApiError",
    "InteractionAnswer",
    "InteractionHandler",
    "InteractionRequired",
    "TurnEnd",
    "TurnResult",
    "TurnStatus",
    "TurnTimeout",
    "create_token",
    "image_file",
    "reply_text",
    "revoke_token",
    "run_turn",
    "session_events",
]

DEFAULT_TURN_TIMEOUT: Final = 300.0
"""Seconds :func:`run_turn` waits for a turn's end by default."""

TurnStatus: TypeAlias = Literal["completed", "failed", "canceled"]
"""How a turn ended: its terminal event's type without ``turn.``."""

TurnEnd: TypeAlias = TurnCompletedEvent | TurnFailedEvent | TurnCanceledEvent
"""A turn's terminal event."""

InteractionAnswer: TypeAlias = Decision | AnswerRequest
"""An answer to an ``interaction.requested``: a bare decision, or a full :class:`AnswerRequest`
(with ``answers`` for a question, or an ACP ``option_id``)."""

InteractionHandler: TypeAlias = Callable[
    [InteractionRequestedEvent], InteractionAnswer | None | Awaitable[InteractionAnswer | None]
]
"""``on_interaction`` of :func:`run_turn`, plain or ``async``: the answer, or ``None`` to leave the
request to another client (the console, say) and keep waiting."""

_STATUS: Final[dict[type[Any], TurnStatus]] = {
    TurnCompletedEvent: "completed",
    TurnFailedEvent: "failed",
    TurnCanceledEvent: "canceled",
}


class ApiError(Exception):
    """A REST call answered with an error: ``status`` is the HTTP status; ``code`` and ``message``
    come from the error body (``{"error": {"code", "message", "details"?}}``), ``error`` is the
    parsed body (``None`` when it was not one)."""

    def __init__(self, operation: str, response: Response[Any]) -> None:
        self.status = int(response.status_code)
        self.error = response.parsed if isinstance(response.parsed, ErrorResponse) else None
        if self.error is not None:
            self.code: str | None = self.error.error.code
            self.message = self.error.error.message
        else:
            self.code = None
            self.message = response.content[:200].decode("utf-8", "replace")
        super().__init__(f"{operation}: HTTP {self.status} {self.code or ''}: {self.message}")


@dataclass(frozen=True)
class TurnResult:
    """A turn that ended."""

    room_id: str
    session_id: str
    turn_id: str
    status: TurnStatus
    """``completed``, ``failed`` (see :attr:`error`) or ``canceled`` (see :attr:`reason`)."""
    reply: str
    """The agent's messages of the turn (each ``message.completed``'s text), one per line."""
    events: list[Event] = field(repr=False)
    """The turn's events in room order (``seq``), its terminal event last."""

    @property
    def end(self) -> TurnEnd:
        """The terminal event."""
        last = self.events[-1]
        assert isinstance(last, (TurnCompletedEvent, TurnFailedEvent, TurnCanceledEvent))
        return last

    @property
    def error(self) -> ErrorInfo | None:
        """Why a ``failed`` turn failed (``code``, e.g. ``scripted_failure``, and ``message``)."""
        end = self.end
        return end.payload.error if isinstance(end, TurnFailedEvent) else None

    @property
    def reason(self) -> str | None:
        """Why a ``canceled`` turn was canceled: ``interrupted`` (a cancel reached the agent),
        ``declined`` (an interaction answered ``cancel``), ``canceled`` (ended by the server for
        an agent that was gone), or the reason of a close."""
        end = self.end
        return end.payload.reason if isinstance(end, TurnCanceledEvent) else None


class InteractionRequired(Exception):
    """The turn asks for an approval or an answer and :func:`run_turn` was given no
    ``on_interaction``. The turn still waits on the server: answer it
    (``ensemble_client.api.interactions.answer_interaction`` with ``event.payload.request_id``)
    or cancel it. ``events`` are the turn's events so far, ``event`` last."""

    def __init__(self, event: InteractionRequestedEvent, events: list[Event]) -> None:
        p = event.payload
        super().__init__(
            f"turn {event.turn_id} of session {event.session_id} waits on {p.kind.value} {p.request_id}: {p.title}"
            " (pass on_interaction to run_turn to answer it)"
        )
        self.event = event
        self.request_id = p.request_id
        self.turn_id = str(event.turn_id)
        self.events = events


class TurnTimeout(TimeoutError):
    """The turn did not end within ``timeout`` seconds (it keeps running on the server).
    ``turn_id`` is ``None`` when the submit itself did not finish; ``events`` are the turn's
    events so far."""

    def __init__(self, timeout: float, turn_id: str | None, events: list[Event]) -> None:
        what = f"turn {turn_id}" if turn_id is not None else "the submit"
        super().__init__(f"{what} did not end within {timeout}s")
        self.timeout = timeout
        self.turn_id = turn_id
        self.events = events


_IMAGE_TYPES: Final = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp"}


def image_file(path: str | os.PathLike[str]) -> ImageInput:
    """An image item of a turn's input from a file on this machine (sent as its bytes, base64;
    its type from its extension: ``.png``, ``.jpg``/``.jpeg``, ``.gif``, ``.webp``). For a file in
    the session's workspace, send ``ImageInput(type_=ImageInputType.IMAGE, path=...)`` instead."""
    p = Path(path)
    mime = _IMAGE_TYPES.get(p.suffix.lower())
    if mime is None:
        raise ValueError(f"{p.name}: not a PNG, JPEG, GIF or WebP file name")
    data = base64.b64encode(p.read_bytes()).decode("ascii")
    return ImageInput(type_=ImageInputType.IMAGE, data=data, mime_type=mime, name=p.name)


def reply_text(events: Iterable[Event]) -> str:
    """The agent's reply in ``events``: the text of each ``message.completed``, one per line (a
    message cut short by a cancel is completed with its text so far)."""
    return "\n".join(e.payload.text for e in events if isinstance(e, MessageCompletedEvent))


async def session_events(
    frames: AsyncIterable[ServerFrame], session_id: str, *, turn_id: str | None = None
) -> AsyncIterator[Event]:
    """The events of one session (and, with ``turn_id``, of one turn) among a room stream's
    frames, in order: ``event`` frames, and ``side_event`` frames when ``session_id`` is a side
    conversation. Other frames and other sessions' events are skipped. The iteration ends when
    the stream does; the stream stays the caller's to close (``async with RoomStream(…)``)."""
    async for frame in frames:
        if not isinstance(frame, (EventFrame, SideEventFrame)):
            continue
        event = frame.event
        if event.session_id == session_id and (turn_id is None or event.turn_id == turn_id):
            yield event


def _submit_body(text_or_input: str | Sequence[TextInput | ImageInput | FileInput] | SubmitTurnRequest) -> SubmitTurnRequest:
    if isinstance(text_or_input, SubmitTurnRequest):
        return text_or_input
    if isinstance(text_or_input, str):
        return SubmitTurnRequest(input_=[TextInput(type_=TextInputType.TEXT, text=text_or_input)])
    return SubmitTurnRequest(input_=list(text_or_input))


class _Turn:
    """One turn being followed: its events (each once), and the interactions answered so far."""

    def __init__(
        self,
        api: AuthenticatedClient,
        room_id: str,
        session_id: str,
        on_interaction: InteractionHandler | None,
        on_event: Callable[[Event], object] | None,
    ) -> None:
        self.api = api
        self.room_id = room_id
        self.session_id = session_id
        self.on_interaction = on_interaction
        self.on_event = on_event
        self.turn_id: str | None = None
        self.events: list[Event] = []
        self.seen: set[str] = set()
        self.resolved: set[str] = set()

    async def take(self, event: Event, *, answer: bool = True) -> bool:
        """Records one of the turn's events (again: ignored); True when it is the terminal one."""
        if event.event_id in self.seen:
            return False
        self.seen.add(event.event_id)
        self.events.append(event)
        if self.on_event is not None:
            self.on_event(event)
        if isinstance(event, InteractionResolvedEvent):
            self.resolved.add(event.payload.request_id)
        elif isinstance(event, InteractionRequestedEvent) and answer:
            await self.interaction(event)
        return type(event) in _STATUS

    async def interaction(self, event: InteractionRequestedEvent) -> None:
        if event.payload.request_id in self.resolved:
            return
        if self.on_interaction is None:
            raise InteractionRequired(event, list(self.events))
        answer = self.on_interaction(event)
        if inspect.isawaitable(answer):
            answer = await answer
        if answer is None:
            return  # left to another client
        body = answer if isinstance(answer, AnswerRequest) else AnswerRequest(decision=answer)
        r = await answer_interaction.asyncio_detailed(
            self.room_id, self.session_id, event.payload.request_id, client=self.api, body=body
        )
        if r.status_code == 200:
            return
        if _code(r) == "interaction_resolved":
            return  # another client answered first
        raise ApiError(f"answering {event.payload.request_id}", r)

    async def backfill(self) -> bool:
        """The turn's events so far from the log (a duplicate submit or a steer names a turn that
        began before the stream's position): the side conversation's log when the session is one,
        else the room's. True when the turn has ended."""
        assert self.turn_id is not None
        side = True
        found: list[Event] = []
        after = 0
        while True:
            r: Response[ErrorResponse | EventList]
            if side:
                r = await side_events.asyncio_detailed(
                    self.room_id, self.session_id, client=self.api, after=after, limit=1000
                )
                if _code(r) == "not_a_side":
                    side = False
                    continue
            else:
                r = await list_events.asyncio_detailed(self.room_id, client=self.api, after=after, limit=1000)
            if not isinstance(r.parsed, EventList):
                raise ApiError("reading the turn's events", r)
            if not r.parsed.data:
                break
            found += [e for e in r.parsed.data if e.session_id == self.session_id and e.turn_id == self.turn_id]
            after = r.parsed.data[-1].seq
        ended = False
        for event in found:
            ended = await self.take(event, answer=False) or ended
        if ended:
            return True
        # Answer what is still open only now that every resolution in the log is known.
        for event in found:
            if isinstance(event, InteractionRequestedEvent):
                await self.interaction(event)
        return False

    async def run(self, base_url: str, token: str, body: SubmitTurnRequest) -> TurnResult:
        # Live-only: the hello fixes the position (the room's head) before the submit, and the
        # stream reconnects from the last seq it yielded, so no event after it is missed.
        async with RoomStream(base_url, token, self.room_id, after=None) as stream:
            r = await submit_turn.asyncio_detailed(self.room_id, self.session_id, client=self.api, body=body)
            if not isinstance(r.parsed, TurnAccepted):
                raise ApiError(f"submitting a turn to {self.session_id}", r)
            self.turn_id = r.parsed.turn_id
            if (r.parsed.duplicate or r.parsed.steered) and await self.backfill():
                return self.result()
            async for event in session_events(stream, self.session_id, turn_id=self.turn_id):
                if await self.take(event):
                    return self.result()
        raise RoomStreamError("the room stream was closed before the turn ended")

    def result(self) -> TurnResult:
        assert self.turn_id is not None
        return TurnResult(
            room_id=self.room_id,
            session_id=self.session_id,
            turn_id=self.turn_id,
            status=_STATUS[type(self.events[-1])],
            reply=reply_text(self.events),
            events=list(self.events),
        )


def _code(response: Response[Any]) -> str | None:
    parsed = response.parsed
    return parsed.error.code if isinstance(parsed, ErrorResponse) else None


async def run_turn(
    api: AuthenticatedClient,
    base_url: str,
    token: str,
    room_id: str,
    session_id: str,
    text_or_input: str | Sequence[TextInput | ImageInput | FileInput] | SubmitTurnRequest,
    *,
    on_interaction: InteractionHandler | None = None,
    on_event: Callable[[Event], object] | None = None,
    timeout: float | None = DEFAULT_TURN_TIMEOUT,
) -> TurnResult:
    """Submits a turn to a session and waits for its end.

    ``api`` is the REST client; ``base_url`` and ``token`` open the room stream (the same values
    the client was made with).

    ``text_or_input``: the turn's text, its input items (text, images, files), or a whole :class:`SubmitTurnRequest`
    (for a ``client_submit_id`` or ``steer``; a duplicate submit or a steer follows the existing
    turn, its earlier events read from the log).

    ``on_interaction``: called with each ``interaction.requested`` of the turn (plain or
    ``async``); it returns a :class:`Decision` (``Decision.ACCEPT``, ``DECLINE``, …) or an
    :class:`AnswerRequest`, which is sent, or ``None`` to leave the request to another client
    and keep waiting. Without it, the first request raises :class:`InteractionRequired`.

    ``on_event``: called with each of the turn's events as it arrives (e.g. to print
    ``message.delta`` text as it streams).

    ``timeout``: seconds for the whole call (``None``: no limit); past it,
    :class:`TurnTimeout`. The turn is never canceled by this function.

    Returns a :class:`TurnResult`. Raises :class:`ApiError` when the submit is refused (e.g.
    409 ``turn_active``, 404 for an unknown session) or an answer is.
    """
    turn = _Turn(api, room_id, session_id, on_interaction, on_event)
    deadline = asyncio.timeout(timeout)
    try:
        async with deadline:
            return await turn.run(base_url, token, _submit_body(text_or_input))
    except TimeoutError:
        if timeout is not None and deadline.expired():
            raise TurnTimeout(timeout, turn.turn_id, list(turn.events)) from None
        raise


async def create_token(
    api: AuthenticatedClient,
    name: str,
    role: Role | Literal["viewer", "operator", "approver", "admin"],
    rooms: Sequence[str],
    ttl_secs: int | None = None,
) -> tuple[TokenInfo, str]:
    """Makes a token (``POST /v1/tokens``; ``api`` needs an ``admin`` token) and returns it with
    its secret, which the server shows only this once: keep it.

    ``name`` says who holds it (events it causes carry it as ``actor.name``); ``role`` is
    ``viewer`` (read only), ``operator`` (turns, sessions), ``approver`` (answers approvals too) or
    ``admin``; ``rooms`` are the room ids it reaches, ``["*"]`` for every room; ``ttl_secs``, when
    given, is how long it works. Raises :class:`ApiError` when refused (403 ``forbidden`` without an
    admin token, 400 for a bad name or room, 409 ``too_many_tokens``).
    """
    body = CreateToken(name=name, role=Role(role), rooms=list(rooms))
    if ttl_secs is not None:
        body.ttl_secs = ttl_secs
    r = await _create_token.asyncio_detailed(client=api, body=body)
    if r.status_code != 201 or not isinstance(r.parsed, CreatedToken):
        raise ApiError(f"creating the token {name!r}", r)
    return r.parsed.token, r.parsed.secret


async def revoke_token(api: AuthenticatedClient, token_id: str) -> TokenInfo:
    """Revokes a token at once (``DELETE /v1/tokens/{token_id}``, admin): its requests are 401 from
    then on and its room streams end with :class:`~ensemble_client.room.TokenRevoked`. Returns the
    revoked token (again for one already revoked); raises :class:`ApiError` when refused (404
    ``token_not_found``, 400 ``admin_token`` for the token file's)."""
    r = await _revoke_token.asyncio_detailed(token_id, client=api)
    if r.status_code != 200 or not isinstance(r.parsed, TokenInfo):
        raise ApiError(f"revoking the token {token_id}", r)
    return r.parsed
