"""The room WebSocket as an async stream of typed frames, reconnecting without losing an event.

``GET /v1/rooms/{roomId}/ws?after=N`` sends ``hello``, then every durable event with ``seq > N``
from the log, then live events. :class:`RoomStream` wraps it: every frame is parsed with the
generated models (``HelloFrame``, ``EventFrame`` whose ``.event`` is one of the ``Event`` variants,
``SideEventFrame``, ``PongFrame``, ``ErrorFrame``), and a dropped connection is reopened with
``after=<the last seq yielded>``, so the ``EventFrame`` seqs it yields are exactly ``after+1,
after+2, …``: nothing lost, nothing twice. Example::

    import asyncio
    from ensemble_client.models import EventFrame, MessageDeltaEvent
    from ensemble_client.room import RoomStream

    async def main(token: str) -> None:
        async with RoomStream("http://127.0.0.1:7878", token, "demo", after=0) as stream:
            async for frame in stream:
                if isinstance(frame, EventFrame) and isinstance(frame.event, MessageDeltaEvent):
                    print(frame.event.payload.text, end="", flush=True)

    asyncio.run(main(open("/path/to/token").read().strip()))

Authentication: the token travels as the WebSocket subprotocol list
``["ensemble.v1", "ensemble.bearer.<token>"]`` (the browsers' mechanism; the server answers
``ensemble.v1``, so the token is never echoed) — never in the URL, which the server refuses.

Reconnect semantics:

- **What reconnects.** A connection that drops (network error, a close from the server such as
  4001 idle or 1001 shutdown) or ends with a ``resync`` frame whose reason is transient
  (``lagged``: the client fell behind; ``closed``, ``store_error``; close code 4000) is reopened
  with ``after=<last seq yielded>``. Its ``resync`` frame is not yielded. An event whose seq is
  not the next one (a gap, which the server promises never to send) also makes it reconnect from
  the last seq rather than skip anything; a seq already yielded is dropped.
- **``hello``.** The first connection's ``hello`` is the first frame yielded. The ``hello`` of a
  reconnection is swallowed (the frames then continue as if nothing happened); it is kept in
  :attr:`RoomStream.hello` and :attr:`RoomStream.reconnects` counts reconnections. When the stream
  is opened with ``after=None`` (live only), the first ``hello``'s ``headSeq`` is the position.
- **Side conversations.** ``side_event`` frames (a side's events are not in the room log; their
  ``event.seq`` counts within the side) are yielded as they come. The WebSocket never replays
  them: side events published while the connection was down are not on the stream. The last
  side seq seen per side is in :attr:`RoomStream.side_seqs`; fetch what was missed with
  ``GET …/sessions/{sideId}/events?after=N`` (``ensemble_client.api.sides.side_events``).
- **History that is gone.** A ``resync`` with reason ``history_expired`` (``after`` is older than
  the retained history) or ``ahead_of_log`` (``after`` is beyond the room's head, e.g. another
  server's data) would fail the same way on every reconnect, so it is never retried: the stream
  closes and raises :class:`HistoryExpired` (or :class:`ResyncRequired` for ``ahead_of_log``),
  carrying the room's ``head_seq``. Reload the state over REST and open a new stream (e.g. with
  ``after=exc.head_seq``).
- **Bounded retries.** A reconnection right after a connection that worked (it yielded a frame,
  or stayed open ``stable_after`` seconds) is immediate; each further failed attempt waits
  ``backoff_initial * 2**(n-1)`` seconds (at most ``backoff_max``, with jitter; a 503's
  ``Retry-After`` is honoured up to ``backoff_max``). When ``max_retries + 1`` attempts in a row
  have failed (a connection that opens but drops before yielding anything counts as failed), the
  stream closes and raises :class:`RetriesExhausted` (its ``__cause__`` is the last error). A
  refusal that retrying cannot fix (400, 401, 403, 404, …) raises :class:`RoomRefused` at once.
- **A revoked or expired token.** When the stream's token is revoked (``DELETE /v1/tokens/{id}``)
  or expires while connected, the server closes the socket with code 4003
  (:data:`CLOSE_TOKEN_REVOKED`). Reconnecting with that token cannot work, so it is never tried:
  the stream closes and raises :class:`TokenRevoked` at once (frames already yielded stay yielded).
- **The token's role.** Every ``hello`` says the role of the stream's token (``viewer``,
  ``operator``, ``approver`` or ``admin``); :attr:`RoomStream.role` is the last one seen.
- **Parse failures.** A frame the generated models cannot parse (a mismatch between the server
  and the OpenAPI document) raises :class:`FrameParseError` with the raw text; it is not counted
  as yielded, so nothing is skipped silently.
- **Closing.** :meth:`RoomStream.close` (also from another task, and at the end of ``async
  with``) ends the iteration cleanly (close code 1000); it is idempotent.

One task iterates a stream; :meth:`RoomStream.ping` and :meth:`RoomStream.close` may be called from
others.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import deque
from collections.abc import Mapping
from enum import Enum
from types import TracebackType
from typing import Any, Final, TypeAlias
from urllib.parse import quote, urlsplit, urlunsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus
from websockets.typing import Subprotocol

from .models import (
    CallCompletedEvent,
    CallCompletedEventType,
    CallStartedEvent,
    CallStartedEventType,
    CallUpdatedEvent,
    CallUpdatedEventType,
    CommandsUpdatedEvent,
    CommandsUpdatedEventType,
    ErrorFrame,
    ErrorResponse,
    EventFrame,
    GoalClearedEvent,
    GoalClearedEventType,
    GoalReconcileRequiredEvent,
    GoalReconcileRequiredEventType,
    GoalUpdatedEvent,
    GoalUpdatedEventType,
    HelloFrame,
    InteractionRequestedEvent,
    InteractionRequestedEventType,
    InteractionResolvedEvent,
    InteractionResolvedEventType,
    MessageCompletedEvent,
    MessageCompletedEventType,
    MessageDeltaEvent,
    MessageDeltaEventType,
    NoticeEvent,
    NoticeEventType,
    TurnChangesEvent,
    TurnChangesEventType,
    WorkspaceCommittedEvent,
    WorkspaceCommittedEventType,
    QueueUpdatedEvent,
    QueueUpdatedEventType,
    SessionNeedsAttentionEvent,
    SessionNeedsAttentionEventType,
    BudgetExhaustedEvent,
    BudgetExhaustedEventType,
    NetworkBlockedEvent,
    NetworkBlockedEventType,
    WorkspaceRestoredEvent,
    WorkspaceRestoredEventType,
    PlanUpdatedEvent,
    PlanUpdatedEventType,
    PongFrame,
    ReasoningCompletedEvent,
    ReasoningCompletedEventType,
    ReasoningDeltaEvent,
    ReasoningDeltaEventType,
    ResyncFrame,
    Role,
    SessionCompletedEvent,
    SessionCompletedEventType,
    SessionFailedEvent,
    SessionFailedEventType,
    SessionStartedEvent,
    SessionStartedEventType,
    SessionUpdatedEvent,
    SessionUpdatedEventType,
    SideEventFrame,
    TurnCanceledEvent,
    TurnCanceledEventType,
    TurnCompletedEvent,
    TurnCompletedEventType,
    TurnFailedEvent,
    TurnFailedEventType,
    TurnStartedEvent,
    TurnStartedEventType,
    TurnSteeredEvent,
    TurnSteeredEventType,
    UsageUpdatedEvent,
    UsageUpdatedEventType,
)

__all__ = [
    "APP_PROTOCOL",
    "BEARER_PREFIX",
    "CLOSE_IDLE",
    "CLOSE_RESYNC",
    "CLOSE_TOKEN_REVOKED",
    "EVENT_CLASSES",
    "FRAME_CLASSES",
    "Event",
    "FrameParseError",
    "HistoryExpired",
    "ResyncRequired",
    "RetriesExhausted",
    "RoomRefused",
    "RoomStream",
    "RoomStreamError",
    "ServerFrame",
    "TokenRevoked",
    "parse_event",
    "parse_frame",
]

APP_PROTOCOL: Final = "ensemble.v1"
"""The application subprotocol; the server chooses it."""
BEARER_PREFIX: Final = "ensemble.bearer."
"""Prefix of the subprotocol entry carrying the bearer token."""
CLOSE_RESYNC: Final = 4000
"""Close code after a ``resync`` frame."""
CLOSE_IDLE: Final = 4001
"""Close code for a peer silent past the server's idle timeout."""
CLOSE_TOKEN_REVOKED: Final = 4003
"""Close code when the socket's token was revoked or expired: never reconnected."""

Event: TypeAlias = (
    SessionStartedEvent
    | SessionUpdatedEvent
    | SessionCompletedEvent
    | SessionFailedEvent
    | TurnStartedEvent
    | TurnCompletedEvent
    | TurnFailedEvent
    | TurnCanceledEvent
    | TurnSteeredEvent
    | MessageDeltaEvent
    | MessageCompletedEvent
    | ReasoningDeltaEvent
    | ReasoningCompletedEvent
    | CallStartedEvent
    | CallUpdatedEvent
    | CallCompletedEvent
    | InteractionRequestedEvent
    | InteractionResolvedEvent
    | UsageUpdatedEvent
    | CommandsUpdatedEvent
    | PlanUpdatedEvent
    | GoalUpdatedEvent
    | GoalClearedEvent
    | GoalReconcileRequiredEvent
    | NoticeEvent
    | TurnChangesEvent
    | WorkspaceRestoredEvent
    | WorkspaceCommittedEvent
    | QueueUpdatedEvent
    | SessionNeedsAttentionEvent
    | BudgetExhaustedEvent
    | NetworkBlockedEvent
)
"""The document's ``Event`` union: one generated class per event ``type``."""

ServerFrame: TypeAlias = HelloFrame | EventFrame | SideEventFrame | ResyncFrame | PongFrame | ErrorFrame
"""The document's ``ServerFrame`` union (what the room WebSocket sends)."""


def _single_value(enum_type: type[Enum]) -> str:
    (member,) = list(enum_type)
    return str(member.value)


_EVENT_VARIANTS: tuple[tuple[type[Any], type[Enum]], ...] = (
    (SessionStartedEvent, SessionStartedEventType),
    (SessionUpdatedEvent, SessionUpdatedEventType),
    (SessionCompletedEvent, SessionCompletedEventType),
    (SessionFailedEvent, SessionFailedEventType),
    (TurnStartedEvent, TurnStartedEventType),
    (TurnCompletedEvent, TurnCompletedEventType),
    (TurnFailedEvent, TurnFailedEventType),
    (TurnCanceledEvent, TurnCanceledEventType),
    (TurnSteeredEvent, TurnSteeredEventType),
    (MessageDeltaEvent, MessageDeltaEventType),
    (MessageCompletedEvent, MessageCompletedEventType),
    (ReasoningDeltaEvent, ReasoningDeltaEventType),
    (ReasoningCompletedEvent, ReasoningCompletedEventType),
    (CallStartedEvent, CallStartedEventType),
    (CallUpdatedEvent, CallUpdatedEventType),
    (CallCompletedEvent, CallCompletedEventType),
    (InteractionRequestedEvent, InteractionRequestedEventType),
    (InteractionResolvedEvent, InteractionResolvedEventType),
    (UsageUpdatedEvent, UsageUpdatedEventType),
    (CommandsUpdatedEvent, CommandsUpdatedEventType),
    (PlanUpdatedEvent, PlanUpdatedEventType),
    (GoalUpdatedEvent, GoalUpdatedEventType),
    (GoalClearedEvent, GoalClearedEventType),
    (GoalReconcileRequiredEvent, GoalReconcileRequiredEventType),
    (NoticeEvent, NoticeEventType),
    (TurnChangesEvent, TurnChangesEventType),
    (WorkspaceRestoredEvent, WorkspaceRestoredEventType),
    (WorkspaceCommittedEvent, WorkspaceCommittedEventType),
    (QueueUpdatedEvent, QueueUpdatedEventType),
    (SessionNeedsAttentionEvent, SessionNeedsAttentionEventType),
    (BudgetExhaustedEvent, BudgetExhaustedEventType),
    (NetworkBlockedEvent, NetworkBlockedEventType),
)

EVENT_CLASSES: Final[Mapping[str, type[Any]]] = {_single_value(t): cls for cls, t in _EVENT_VARIANTS}
"""The ``Event`` discriminator: event ``type`` (e.g. ``"message.delta"``) → generated class."""

FRAME_CLASSES: Final[Mapping[str, type[Any]]] = {
    "hello": HelloFrame,
    "event": EventFrame,
    "side_event": SideEventFrame,
    "resync": ResyncFrame,
    "pong": PongFrame,
    "error": ErrorFrame,
}
"""The ``ServerFrame`` discriminator: frame ``type`` → generated class."""

_TERMINAL_RESYNCS: Final = frozenset({"history_expired", "ahead_of_log"})
_RETRYABLE_STATUSES: Final = frozenset({408, 425, 429, 500, 502, 503, 504})


class RoomStreamError(Exception):
    """Base class of the room stream's errors."""


class FrameParseError(RoomStreamError):
    """A frame (or event) the generated models cannot parse: a mismatch between the server and the
    OpenAPI document. ``raw`` is the frame's text, ``__cause__`` the parser's error."""

    def __init__(self, message: str, raw: str) -> None:
        super().__init__(f"{message}: {raw[:500]}")
        self.raw = raw


class RoomRefused(RoomStreamError):
    """The server refused the WebSocket handshake with a status retrying cannot fix (400 bad
    input, 401 no valid token, 403 Host/Origin, 404 ``room_not_found``: a room outside the
    token's rooms, …). ``error`` is the parsed body."""

    def __init__(self, status: int, error: ErrorResponse | None, body: bytes) -> None:
        code = error.error.code if error is not None else None
        message = error.error.message if error is not None else body[:200].decode("utf-8", "replace")
        super().__init__(f"the server refused the room WebSocket: HTTP {status} {code or ''}: {message}")
        self.status = status
        self.error = error


class ResyncRequired(RoomStreamError):
    """The server cannot continue from the stream's position and reconnecting would not help
    (``reason`` ``ahead_of_log``, or ``history_expired`` as :class:`HistoryExpired`). Reload the
    room over REST and open a new stream (e.g. ``after=head_seq``)."""

    def __init__(self, frame: ResyncFrame, last_seq: int | None) -> None:
        super().__init__(
            f"the room cannot be followed from seq {last_seq}: resync `{frame.reason}` (the room's head is {frame.head_seq})"
        )
        self.frame = frame
        self.reason: str = frame.reason
        self.head_seq: int = frame.head_seq
        self.last_seq = last_seq


class HistoryExpired(ResyncRequired):
    """The history after the stream's position is no longer retained (``resync``
    ``history_expired``): events were pruned, so a gap-free continuation is impossible."""


class TokenRevoked(RoomStreamError):
    """The server closed the room WebSocket with code 4003: the stream's token was revoked or
    expired while connected. The stream is closed and does not reconnect (the token cannot work
    again); open a new one with another token. ``close_reason`` is the close frame's reason,
    ``last_seq`` the stream's position (to continue from with the new token)."""

    def __init__(self, room_id: str, close_reason: str, last_seq: int | None) -> None:
        super().__init__(
            f"the room WebSocket of {room_id!r} was closed with {CLOSE_TOKEN_REVOKED}"
            f" ({close_reason or 'token revoked or expired'}): the token no longer works"
        )
        self.room_id = room_id
        self.close_code: int = CLOSE_TOKEN_REVOKED
        self.close_reason = close_reason
        self.last_seq = last_seq


class RetriesExhausted(RoomStreamError):
    """``max_retries`` reconnection attempts in a row failed; ``__cause__`` is the last error."""

    def __init__(self, attempts: int, last_error: BaseException | str | None) -> None:
        super().__init__(f"the room WebSocket could not be reopened after {attempts} attempts: {last_error}")
        self.attempts = attempts
        self.last_error = last_error


def parse_event(data: Mapping[str, Any]) -> Event:
    """Parses one event (``{seq, roomId, …, type, payload}``) with the generated class its
    ``type`` names; raises ``KeyError``/``ValueError``/``TypeError`` when it does not fit."""
    cls = EVENT_CLASSES.get(str(data.get("type")))
    if cls is None:
        raise ValueError(f"unknown event type {data.get('type')!r}")
    event: Event = cls.from_dict(data)
    return event


def parse_frame(raw: str | bytes) -> ServerFrame:
    """Parses one WebSocket text frame into its generated ``ServerFrame`` class, with the
    generated ``from_dict``; raises :class:`FrameParseError` when it does not fit the document
    (including an event that the generated union parses as another variant than its ``type``)."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise FrameParseError("a frame is not JSON", text) from exc
    if not isinstance(data, dict):
        raise FrameParseError("a frame is not a JSON object", text)
    cls = FRAME_CLASSES.get(str(data.get("type")))
    if cls is None:
        raise FrameParseError(f"unknown frame type {data.get('type')!r}", text)
    try:
        frame: ServerFrame = cls.from_dict(data)
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        # The generated union tries every variant and reports the last one's error; name the
        # variant the discriminator chooses and its own error instead.
        event = data.get("event")
        if cls in (EventFrame, SideEventFrame) and isinstance(event, dict):
            try:
                parse_event(event)
            except (KeyError, ValueError, TypeError, AttributeError) as inner:
                variant = EVENT_CLASSES.get(str(event.get("type")))
                name = variant.__name__ if variant is not None else "no variant"
                raise FrameParseError(f"{cls.__name__}: event as {name} failed ({inner!r})", text) from inner
        raise FrameParseError(f"{cls.__name__}.from_dict failed ({exc!r})", text) from exc
    if isinstance(frame, (EventFrame, SideEventFrame)):
        expected = EVENT_CLASSES.get(str(data["event"].get("type")))
        if type(frame.event) is not expected:
            raise FrameParseError(
                f"an event of type {data['event'].get('type')!r} parsed as {type(frame.event).__name__}", text
            )
    return frame


def _ws_url(base_url: str, room_id: str, after: int | None) -> str:
    parts = urlsplit(base_url)
    scheme = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}.get(parts.scheme)
    if scheme is None:
        raise ValueError(f"base_url must be http(s):// or ws(s)://, not {base_url!r}")
    path = parts.path.rstrip("/") + f"/v1/rooms/{quote(room_id, safe='')}/ws"
    query = f"after={after}" if after is not None else ""
    return urlunsplit((scheme, parts.netloc, path, query, ""))


def _revoked(exc: ConnectionClosed) -> str | None:
    """The close frame's reason when the server closed with 4003 (token revoked), else ``None``."""
    rcvd = exc.rcvd
    if rcvd is not None and rcvd.code == CLOSE_TOKEN_REVOKED:
        return rcvd.reason
    return None


def _retry_after(exc: InvalidStatus) -> float | None:
    value = exc.response.headers.get("Retry-After")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class RoomStream:
    """An async iterator over a room's WebSocket frames that reconnects without losing or
    repeating an event (see the module's documentation for the exact semantics).

    ``after``: yield events with ``seq > after`` (``0``: the whole retained history); ``None``:
    live only, from the head at connection time.
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        room_id: str,
        *,
        after: int | None = None,
        max_retries: int = 8,
        backoff_initial: float = 0.1,
        backoff_max: float = 5.0,
        stable_after: float = 30.0,
        open_timeout: float = 10.0,
        ping_interval: float | None = 20.0,
        ping_timeout: float | None = 20.0,
        close_timeout: float = 5.0,
        max_frame_bytes: int | None = 16 * 1024 * 1024,
    ) -> None:
        if after is not None and after < 0:
            raise ValueError("after must be >= 0")
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self._base_url = base_url
        self._token = token
        self._room_id = room_id
        self._last_seq: int | None = after
        self.max_retries = max_retries
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.stable_after = stable_after
        self.open_timeout = open_timeout
        self._connect_options: dict[str, Any] = {
            "ping_interval": ping_interval,
            "ping_timeout": ping_timeout,
            "close_timeout": close_timeout,
            "max_size": max_frame_bytes,
        }
        self._conn: ClientConnection | None = None
        self._ready = False
        self._closed = False
        self._closing = asyncio.Event()
        self._pending: deque[ServerFrame] = deque()
        self._hello: HelloFrame | None = None
        self._reconnects = 0
        self._resyncs = 0
        self._failures = 0
        self._retry_after: float | None = None
        self._last_error: BaseException | str | None = None
        self._connected_at = 0.0
        self._progress = False
        self._side_seqs: dict[str, int] = {}

    # ---- state -------------------------------------------------------------------------------

    @property
    def room_id(self) -> str:
        return self._room_id

    @property
    def last_seq(self) -> int | None:
        """The seq of the last durable event yielded (or the starting position); reconnections
        ask for ``after=last_seq``. ``None`` only before the first ``hello`` of a live-only stream."""
        return self._last_seq

    @property
    def hello(self) -> HelloFrame | None:
        """The ``hello`` of the current (or last) connection."""
        return self._hello

    @property
    def role(self) -> Role | None:
        """The role of the stream's token, from the last ``hello`` (``None`` before the first)."""
        return self._hello.role if self._hello is not None else None

    @property
    def reconnects(self) -> int:
        """How many times the stream reopened the WebSocket after the first connection."""
        return self._reconnects

    @property
    def resyncs(self) -> int:
        """How many ``resync`` frames (``lagged`` and the like) the stream answered by reconnecting."""
        return self._resyncs

    @property
    def side_seqs(self) -> Mapping[str, int]:
        """The last ``event.seq`` seen per side conversation (``sessionId`` → seq)."""
        return dict(self._side_seqs)

    @property
    def connection(self) -> ClientConnection | None:
        """The current ``websockets`` connection (``None`` between connections)."""
        return self._conn

    @property
    def closed(self) -> bool:
        return self._closed

    # ---- lifecycle ---------------------------------------------------------------------------

    async def connect(self) -> None:
        """Opens the first connection (with the retries) and reads its ``hello``. Iterating
        connects by itself; calling this first surfaces a refusal before the loop starts."""
        if self._closed:
            raise RoomStreamError("the stream is closed")
        if not self._ready:
            await self._open()

    async def close(self) -> None:
        """Closes the stream (close code 1000) and ends the iteration. Idempotent."""
        self._closed = True
        self._closing.set()
        self._pending.clear()
        self._ready = False
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()

    async def ping(self) -> None:
        """Sends the application ``{"type":"ping"}``; the server answers with a ``pong`` frame
        on the stream. Raises :class:`RoomStreamError` when not connected."""
        conn = self._conn
        if conn is None or not self._ready:
            raise RoomStreamError("the room WebSocket is not connected")
        await conn.send(json.dumps({"type": "ping"}))

    async def __aenter__(self) -> RoomStream:
        try:
            await self.connect()
        except BaseException:
            await self.close()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def __aiter__(self) -> RoomStream:
        return self

    async def __anext__(self) -> ServerFrame:
        while True:
            if self._pending:
                return self._pending.popleft()
            if self._closed:
                raise StopAsyncIteration
            conn = self._conn
            if conn is None or not self._ready:
                await self._open()
                continue
            try:
                raw = await conn.recv()
            except ConnectionClosed as exc:
                if self._closed:
                    raise StopAsyncIteration from None
                await self._raise_if_revoked(exc)
                await self._dropped(exc, failed=False)
                continue
            frame = parse_frame(raw)
            if isinstance(frame, EventFrame):
                seq = frame.event.seq
                last = self._last_seq if self._last_seq is not None else seq - 1
                if seq <= last:
                    continue  # already yielded
                if seq != last + 1:
                    await self._dropped(f"gap in the room's seqs: {last} then {seq}", failed=True)
                    continue
                self._last_seq = seq
                self._progress = True
                return frame
            if isinstance(frame, SideEventFrame):
                side = frame.event.session_id
                self._side_seqs[side] = max(self._side_seqs.get(side, 0), frame.event.seq)
                self._progress = True
                return frame
            if isinstance(frame, ResyncFrame):
                if frame.reason in _TERMINAL_RESYNCS:
                    last_seq = self._last_seq
                    await self.close()
                    if frame.reason == "history_expired":
                        raise HistoryExpired(frame, last_seq)
                    raise ResyncRequired(frame, last_seq)
                self._resyncs += 1
                await self._dropped(f"resync `{frame.reason}`", failed=False)
                continue
            if isinstance(frame, HelloFrame):
                self._hello = frame  # only ever the first frame of a connection
                continue
            self._progress = True
            return frame

    # ---- connections -------------------------------------------------------------------------

    async def _raise_if_revoked(self, exc: ConnectionClosed) -> None:
        """A close with 4003 ends the stream: closes it and raises :class:`TokenRevoked`."""
        reason = _revoked(exc)
        if reason is None:
            return
        last_seq = self._last_seq
        await self.close()
        raise TokenRevoked(self._room_id, reason, last_seq) from exc

    async def _dropped(self, why: BaseException | str, *, failed: bool) -> None:
        """Forgets the current connection; the next ``__anext__`` reopens it."""
        conn, self._conn = self._conn, None
        self._ready = False
        worked = self._progress or asyncio.get_running_loop().time() - self._connected_at >= self.stable_after
        if worked and not failed:
            self._failures = 0
        else:
            self._failures += 1
        self._last_error = why
        if conn is None:
            return
        if failed:
            conn.transport.abort()  # a connection that misbehaved: no close handshake
        else:
            await conn.close()  # completes the server's close (or a resync's 4000); bounded by close_timeout

    def _delay(self) -> float:
        if self._failures == 0:
            return 0.0
        delay = min(self.backoff_max, self.backoff_initial * 2.0 ** (self._failures - 1))
        delay *= 0.5 + random.random() / 2
        if self._retry_after is not None:
            delay = max(delay, min(self._retry_after, self.backoff_max))
        return delay

    async def _pause(self, seconds: float) -> None:
        if seconds > 0:
            try:
                await asyncio.wait_for(self._closing.wait(), seconds)
            except TimeoutError:
                pass

    async def _open(self) -> None:
        """Connects (retrying) and reads the ``hello``; raises when it cannot."""
        while True:
            if self._closed:
                raise StopAsyncIteration
            if self._failures > self.max_retries:
                error = self._last_error
                await self.close()
                exc = RetriesExhausted(self._failures, error)
                if isinstance(error, BaseException):
                    raise exc from error
                raise exc
            await self._pause(self._delay())
            if self._closed:
                raise StopAsyncIteration
            self._retry_after = None
            conn = await self._handshake()
            if conn is None:
                continue
            if self._closed:
                await conn.close()
                raise StopAsyncIteration
            self._conn = conn
            try:
                raw = await asyncio.wait_for(conn.recv(), self.open_timeout)
            except (ConnectionClosed, TimeoutError) as exc:
                if self._closed:
                    raise StopAsyncIteration from None
                if isinstance(exc, ConnectionClosed):
                    await self._raise_if_revoked(exc)
                self._conn = None
                conn.transport.abort()
                self._failures += 1
                self._last_error = exc
                continue
            try:
                hello = parse_frame(raw)
                if not isinstance(hello, HelloFrame):
                    raise FrameParseError("the first frame is not `hello`", str(raw))
            except FrameParseError:
                await self.close()
                raise
            if self._last_seq is None:
                self._last_seq = hello.head_seq
            if self._hello is None:
                self._pending.append(hello)
            else:
                self._reconnects += 1
            self._hello = hello
            self._ready = True
            self._progress = False
            self._connected_at = asyncio.get_running_loop().time()
            return

    async def _handshake(self) -> ClientConnection | None:
        """One connection attempt: the connection, or ``None`` after a retryable failure."""
        url = _ws_url(self._base_url, self._room_id, self._last_seq)
        protocols = [Subprotocol(APP_PROTOCOL), Subprotocol(BEARER_PREFIX + self._token)]
        try:
            conn = await connect(url, subprotocols=protocols, open_timeout=self.open_timeout, **self._connect_options)
        except InvalidStatus as exc:
            status = exc.response.status_code
            if status not in _RETRYABLE_STATUSES:
                body = bytes(exc.response.body or b"")
                error: ErrorResponse | None
                try:
                    error = ErrorResponse.from_dict(json.loads(body))
                except (ValueError, KeyError, TypeError, AttributeError):
                    error = None
                await self.close()
                raise RoomRefused(status, error, body) from exc
            self._retry_after = _retry_after(exc)
            self._failures += 1
            self._last_error = exc
            return None
        except (OSError, TimeoutError, InvalidHandshake, EOFError) as exc:
            self._failures += 1
            self._last_error = exc
            return None
        if conn.subprotocol != APP_PROTOCOL:
            await conn.close()
            await self.close()
            raise RoomStreamError(f"the server chose the subprotocol {conn.subprotocol!r}, not {APP_PROTOCOL!r}")
        return conn
