import type { components } from "./schema.js";
type Schemas = components["schemas"];
/**
 * What a RoomStream yields: the server's frames except `pong` (answers to the stream's own
 * keepalive pings) and `resync` (handled by the stream: see {@link RoomStreamError}).
 *
 * - `hello`: first frame of every connection, so one after every reconnect (head seq, sessions);
 * - `event`: a durable room event; `event.seq` is exactly the previous one + 1, across reconnects;
 * - `side_event`: an event of a side conversation (its own seq), passed through as it comes; side
 *   events are not in the room log, so those sent while disconnected are not replayed (fetch them
 *   with `GET …/sessions/{sideId}/events?after=N`);
 * - `error`: the server did not understand a frame the client sent.
 */
export type RoomFrame = Schemas["HelloFrame"] | Schemas["EventFrame"] | Schemas["SideEventFrame"] | Schemas["ErrorFrame"];
/** The subset of the standard WebSocket API the stream uses (browser `WebSocket`, Node `ws`). */
export interface WebSocketLike {
    send(data: string): void;
    close(code?: number, reason?: string): void;
    onopen: ((event: any) => void) | null;
    onmessage: ((event: any) => void) | null;
    onclose: ((event: any) => void) | null;
    onerror: ((event: any) => void) | null;
}
/** A WebSocket constructor: `globalThis.WebSocket` in browsers, `WebSocket` from `ws` in Node. */
export type WebSocketConstructor = new (url: string, protocols: string[]) => WebSocketLike;
export interface RoomStreamOptions {
    /** The server's origin, as for the REST client (`http://…` becomes `ws://…`, `https://` `wss://`). */
    baseUrl: string;
    /** The bearer token; it travels as the subprotocol `ensemble.bearer.<token>`, never in the URL. */
    token: string;
    roomId: string;
    /**
     * Replay durable events with `seq > after` first. Default: none, live events only (the stream
     * then continues from the first `hello`'s `headSeq`).
     */
    after?: number;
    /** The WebSocket implementation (default `globalThis.WebSocket`; Node 20 needs `ws`). */
    WebSocket?: WebSocketConstructor;
    /** Consecutive failed connection attempts before the stream fails with `retries_exhausted` (default 8). */
    maxRetries?: number;
    /** Delay before the first reconnect, doubled after every failed attempt, with jitter (default 250 ms). */
    retryDelayMs?: number;
    /** Longest delay between attempts (default 10 000 ms). */
    maxRetryDelayMs?: number;
    /** A connection that has not delivered `hello` this long after it was opened is retried (default 10 000 ms). */
    connectTimeoutMs?: number;
    /**
     * Interval of `{"type":"ping"}` frames (default 20 000 ms; 0: none). They keep an idle connection
     * open (the server closes a peer silent for `--ws-idle-secs`, 60 s) and detect a dead one: a
     * connection that received nothing (not even a `pong`) for two intervals is dropped and reconnected.
     */
    pingIntervalMs?: number;
}
/**
 * Why a RoomStream stopped for good. The iterator throws it after the frames received before it.
 *
 * - `history_expired`: the events after `lastSeq` were pruned (`--retention-events`/`-secs`); the
 *   stream cannot continue without a gap. Reload the state over REST (sessions, goal, interactions)
 *   and open a new stream with `after: headSeq`.
 * - `ahead_of_log`: the server's log ends before `lastSeq` (e.g. its data dir was replaced): reload
 *   likewise.
 * - `refused`: the server answered the upgrade 401, 403 or 404 (a wrong token, a refused Host or
 *   Origin, a room outside the token's rooms): retrying cannot help, so the stream fails at once. Seen where the WebSocket says the
 *   status (Node's `ws`); a browser's WebSocket hides it, and there this ends as
 *   `retries_exhausted`.
 * - `token_revoked`: the server closed the socket with 4003, the stream's token was revoked or
 *   expired: a {@link TokenRevokedError}, at once and in browsers too (the close code is not hidden).
 * - `retries_exhausted`: `maxRetries` connection attempts in a row failed (server down, too many
 *   connections); `cause` holds the last failure.
 * - `sequence_gap`: an `event` frame's seq was not the previous one + 1 (a server bug; never
 *   expected).
 * - `no_websocket`: no WebSocket implementation (Node 20 without `ws` passed as `WebSocket`).
 */
export declare class RoomStreamError extends Error {
    readonly reason: "history_expired" | "ahead_of_log" | "refused" | "token_revoked" | "retries_exhausted" | "sequence_gap" | "no_websocket";
    /** The room's head seq, from the `resync` frame (`history_expired`, `ahead_of_log`). */
    readonly headSeq?: number | undefined;
    readonly name: string;
    constructor(reason: "history_expired" | "ahead_of_log" | "refused" | "token_revoked" | "retries_exhausted" | "sequence_gap" | "no_websocket", message: string, 
    /** The room's head seq, from the `resync` frame (`history_expired`, `ahead_of_log`). */
    headSeq?: number | undefined, options?: {
        cause?: unknown;
    });
}
/** The close code of a room WebSocket whose token was revoked or expired (never reconnected). */
export declare const CLOSE_TOKEN_REVOKED = 4003;
/**
 * The server closed the stream's socket with {@link CLOSE_TOKEN_REVOKED} (4003): its token was
 * revoked (`DELETE /v1/tokens/{tokenId}`) or expired while connected. Reconnecting with that token
 * cannot work, so the stream ends at once, without a retry (frames already received are read
 * first). Open a new stream with another token, from `lastSeq`. A `RoomStreamError` whose `reason`
 * is `token_revoked`.
 */
export declare class TokenRevokedError extends RoomStreamError {
    /** The close frame's reason (`token revoked or expired`). */
    readonly closeReason: string;
    /** The stream's position when it ended: the `after` for a new stream with another token. */
    readonly lastSeq: number | undefined;
    readonly name: string;
    readonly closeCode = 4003;
    constructor(
    /** The close frame's reason (`token revoked or expired`). */
    closeReason: string, 
    /** The stream's position when it ended: the `after` for a new stream with another token. */
    lastSeq: number | undefined);
}
/** The subprotocol the server answers with. */
export declare const APP_PROTOCOL = "ensemble.v1";
/**
 * A typed, self-reconnecting view of a room's WebSocket. It connects as soon as it is created and
 * buffers frames until they are read; read it with `for await (const frame of stream)` (one reader).
 * Leaving the loop (`break`, `return`, a throw) or `close()` closes it; a terminal failure ends
 * the loop with a {@link RoomStreamError}.
 *
 * Reconnects: when a connection drops (network, server restart, idle close, a `lagged` resync),
 * the stream reconnects with `after=<seq of the last event frame>`: the server replays what was
 * missed, and event frames at or below that seq are dropped, so every durable event is yielded
 * exactly once, in order. Attempts that fail before `hello` back off exponentially; after
 * `maxRetries` failures in a row the stream fails. A close with 4003 (the token was revoked or
 * expired) is never retried: the stream fails with a {@link TokenRevokedError}.
 */
export declare class RoomStream implements AsyncIterable<RoomFrame> {
    private readonly opts;
    private readonly WS;
    private last;
    private queue;
    private waiters;
    private failure;
    private closed;
    private socket;
    /** Identifies the current connection; callbacks of older ones are ignored. */
    private generation;
    private helloSeen;
    private heard;
    private failedAttempts;
    private lastCause;
    private hellos;
    private helloRole;
    private retryTimer;
    private connectTimer;
    private pingTimer;
    constructor(options: RoomStreamOptions);
    /** The seq of the last durable event yielded (or received and buffered); the next connection asks for `after=` it. */
    get lastSeq(): number | undefined;
    /** The role of the stream's token (`viewer` … `admin`), from the last `hello`; undefined before the first. */
    get role(): Schemas["Role"] | undefined;
    /** How many times the stream reconnected (connections that delivered `hello`, after the first). */
    get reconnects(): number;
    /** Closes the connection and ends the iteration (frames not yet read are dropped). Idempotent. */
    close(): void;
    /** The next frame; `done` once closed; rejects with the {@link RoomStreamError} that stopped the stream. */
    next(): Promise<IteratorResult<RoomFrame>>;
    [Symbol.asyncIterator](): AsyncIterator<RoomFrame>;
    private url;
    private connect;
    private received;
    /** The current connection ended (or never came up): reconnect, or give up. */
    private dropped;
    /** Forgets the current connection (its late callbacks are ignored) and stops the timers. */
    private teardown;
    private push;
    private fail;
}
export {};
