// RoomStream: the room WebSocket (`GET /v1/rooms/{roomId}/ws?after=N`) as an async iterable of
// typed frames that reconnects by itself with `after=<last seq>`, so no durable event is lost or
// repeated. Browser-safe: it only uses the standard WebSocket API; in Node pass the `ws` package's
// class as `WebSocket`.

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
  // `any`: the browser's and `ws`'s event types differ; the stream reads `data` and `code` only.
  /* eslint-disable @typescript-eslint/no-explicit-any */
  onopen: ((event: any) => void) | null;
  onmessage: ((event: any) => void) | null;
  onclose: ((event: any) => void) | null;
  onerror: ((event: any) => void) | null;
  /* eslint-enable @typescript-eslint/no-explicit-any */
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
export class RoomStreamError extends Error {
  override readonly name: string = "RoomStreamError";
  constructor(
    readonly reason: "history_expired" | "ahead_of_log" | "refused" | "token_revoked" | "retries_exhausted" | "sequence_gap" | "no_websocket",
    message: string,
    /** The room's head seq, from the `resync` frame (`history_expired`, `ahead_of_log`). */
    readonly headSeq?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The close code of a room WebSocket whose token was revoked or expired (never reconnected). */
export const CLOSE_TOKEN_REVOKED = 4003;

/**
 * The server closed the stream's socket with {@link CLOSE_TOKEN_REVOKED} (4003): its token was
 * revoked (`DELETE /v1/tokens/{tokenId}`) or expired while connected. Reconnecting with that token
 * cannot work, so the stream ends at once, without a retry (frames already received are read
 * first). Open a new stream with another token, from `lastSeq`. A `RoomStreamError` whose `reason`
 * is `token_revoked`.
 */
export class TokenRevokedError extends RoomStreamError {
  override readonly name: string = "TokenRevokedError";
  readonly closeCode = CLOSE_TOKEN_REVOKED;
  constructor(
    /** The close frame's reason (`token revoked or expired`). */
    readonly closeReason: string,
    /** The stream's position when it ended: the `after` for a new stream with another token. */
    readonly lastSeq: number | undefined,
  ) {
    super("token_revoked", `the server closed the room WebSocket with 4003 (${closeReason || "token revoked or expired"}): the token no longer works`);
  }
}

/** The subprotocol the server answers with. */
export const APP_PROTOCOL = "ensemble.v1";
const BEARER_PREFIX = "ensemble.bearer.";
/**
 * `resync` reasons (the server closes with 4000 after the frame) after which reconnecting with
 * `after=<last seq>` continues without a gap; any other reason stops the stream.
 */
const RECOVERABLE_RESYNC = new Set(["lagged", "closed", "store_error"]);

type Timer = ReturnType<typeof setTimeout>;
type Waiter = { resolve: (r: IteratorResult<RoomFrame>) => void; reject: (e: unknown) => void };

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
export class RoomStream implements AsyncIterable<RoomFrame> {
  private readonly opts: Required<Omit<RoomStreamOptions, "after" | "WebSocket">>;
  private readonly WS: WebSocketConstructor | undefined;
  private last: number | undefined;
  private queue: RoomFrame[] = [];
  private waiters: Waiter[] = [];
  private failure: RoomStreamError | undefined;
  private closed = false;
  private socket: WebSocketLike | null = null;
  /** Identifies the current connection; callbacks of older ones are ignored. */
  private generation = 0;
  private helloSeen = false;
  private heard = false;
  private failedAttempts = 0;
  private lastCause: unknown;
  private hellos = 0;
  private helloRole: Schemas["Role"] | undefined;
  private retryTimer: Timer | undefined;
  private connectTimer: Timer | undefined;
  private pingTimer: ReturnType<typeof setInterval> | undefined;

  constructor(options: RoomStreamOptions) {
    this.opts = {
      baseUrl: options.baseUrl,
      token: options.token,
      roomId: options.roomId,
      maxRetries: options.maxRetries ?? 8,
      retryDelayMs: options.retryDelayMs ?? 250,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 10_000,
      connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
      pingIntervalMs: options.pingIntervalMs ?? 20_000,
    };
    this.last = options.after;
    this.WS = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (!this.WS) {
      this.fail(new RoomStreamError("no_websocket", "no WebSocket implementation: pass one as `WebSocket` (in Node 20, the `ws` package's)"));
      return;
    }
    this.connect();
  }

  /** The seq of the last durable event yielded (or received and buffered); the next connection asks for `after=` it. */
  get lastSeq(): number | undefined {
    return this.last;
  }

  /** The role of the stream's token (`viewer` … `admin`), from the last `hello`; undefined before the first. */
  get role(): Schemas["Role"] | undefined {
    return this.helloRole;
  }

  /** How many times the stream reconnected (connections that delivered `hello`, after the first). */
  get reconnects(): number {
    return Math.max(0, this.hellos - 1);
  }

  /** Closes the connection and ends the iteration (frames not yet read are dropped). Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue = [];
    this.teardown(1000, "client closed");
    for (const w of this.waiters.splice(0)) w.resolve({ value: undefined, done: true });
  }

  /** The next frame; `done` once closed; rejects with the {@link RoomStreamError} that stopped the stream. */
  next(): Promise<IteratorResult<RoomFrame>> {
    const frame = this.queue.shift();
    if (frame) return Promise.resolve({ value: frame, done: false });
    if (this.closed) return Promise.resolve({ value: undefined, done: true });
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  [Symbol.asyncIterator](): AsyncIterator<RoomFrame> {
    return {
      next: () => this.next(),
      return: () => {
        this.close();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  private url(): string {
    const location = (globalThis as { location?: { href?: string } }).location;
    const url = new URL(this.opts.baseUrl, location?.href);
    if (url.protocol === "http:") url.protocol = "ws:";
    else if (url.protocol === "https:") url.protocol = "wss:";
    url.pathname = `${url.pathname.replace(/\/+$/, "")}/v1/rooms/${encodeURIComponent(this.opts.roomId)}/ws`;
    url.search = this.last === undefined ? "" : `?after=${this.last}`;
    url.hash = "";
    return url.toString();
  }

  private connect(): void {
    this.retryTimer = undefined;
    if (this.closed || this.failure || !this.WS) return;
    const generation = ++this.generation;
    this.helloSeen = false;
    let ws: WebSocketLike;
    try {
      ws = new this.WS(this.url(), [APP_PROTOCOL, `${BEARER_PREFIX}${this.opts.token}`]);
    } catch (e) {
      this.dropped(e);
      return;
    }
    this.socket = ws;
    const current = () => generation === this.generation;
    ws.onmessage = (ev: { data?: unknown }) => {
      if (current()) this.received(ev.data);
    };
    ws.onclose = (ev: { code?: number; reason?: string }) => {
      if (!current()) return;
      const reason = ev.reason ?? "";
      if (ev.code === CLOSE_TOKEN_REVOKED) {
        // The token was revoked or expired: reconnecting with it cannot work.
        this.fail(new TokenRevokedError(reason, this.last));
        return;
      }
      this.dropped(new Error(`connection closed (code ${ev.code ?? "?"}${reason ? `: ${reason}` : ""})`));
    };
    ws.onerror = (ev: { message?: string; error?: unknown }) => {
      if (!current()) return;
      const cause = ev.error ?? new Error(ev.message ?? "WebSocket error");
      // `ws` reports a refused upgrade as "Unexpected server response: 401".
      const status = /Unexpected server response: (\d{3})/.exec(String(ev.message ?? (cause as Error).message ?? ""));
      if (status && (status[1] === "401" || status[1] === "403" || status[1] === "404")) {
        this.teardown(1000, "refused");
        this.fail(
          new RoomStreamError("refused", `the server refused the connection (HTTP ${status[1]}): check the token, its rooms, Host and Origin`, undefined, {
            cause,
          }),
        );
        return;
      }
      // A close follows; remember why for `retries_exhausted`.
      this.lastCause = cause;
    };
    this.connectTimer = setTimeout(() => {
      if (current() && !this.helloSeen) this.dropped(new Error(`no hello within ${this.opts.connectTimeoutMs} ms`));
    }, this.opts.connectTimeoutMs);
    if (this.opts.pingIntervalMs > 0) {
      this.heard = true;
      let silentTicks = 0;
      this.pingTimer = setInterval(() => {
        if (!current() || !this.helloSeen) return;
        silentTicks = this.heard ? 0 : silentTicks + 1;
        if (silentTicks >= 2) {
          this.dropped(new Error(`nothing received for ${2 * this.opts.pingIntervalMs} ms despite pings`));
          return;
        }
        this.heard = false;
        try {
          ws.send(JSON.stringify({ type: "ping" } satisfies Schemas["ClientFrame"]));
        } catch {
          // Not open (any more): the close event follows.
        }
      }, this.opts.pingIntervalMs);
    }
  }

  private received(data: unknown): void {
    this.heard = true;
    if (typeof data !== "string") return; // the server only sends text frames
    let frame: Schemas["ServerFrame"];
    try {
      frame = JSON.parse(data) as Schemas["ServerFrame"];
    } catch (e) {
      this.dropped(new Error("the server sent a frame that is not JSON", { cause: e }));
      return;
    }
    switch (frame.type) {
      case "hello":
        this.helloSeen = true;
        this.hellos += 1;
        this.failedAttempts = 0;
        this.lastCause = undefined;
        clearTimeout(this.connectTimer);
        if (this.last === undefined) this.last = frame.headSeq;
        this.helloRole = frame.role;
        this.push(frame);
        return;
      case "event": {
        const seq = frame.event.seq;
        const last = this.last ?? seq - 1;
        if (seq <= last) return; // already yielded (replay overlap)
        if (seq !== last + 1) {
          this.fail(new RoomStreamError("sequence_gap", `event seq ${seq} after ${last}`));
          return;
        }
        this.last = seq;
        this.push(frame);
        return;
      }
      case "side_event":
      case "error":
        this.push(frame);
        return;
      case "pong":
        return;
      case "resync":
        if (RECOVERABLE_RESYNC.has(frame.reason)) return; // the close (4000) follows: reconnect then
        this.fail(
          new RoomStreamError(
            frame.reason === "ahead_of_log" ? "ahead_of_log" : "history_expired",
            `resync (${frame.reason}): the room's events after seq ${this.last ?? 0} cannot be replayed (head ${frame.headSeq}); reload over REST and reconnect with after=headSeq`,
            frame.headSeq,
          ),
        );
        return;
      default:
        return; // a frame type this client does not know: ignored
    }
  }

  /** The current connection ended (or never came up): reconnect, or give up. */
  private dropped(cause: unknown): void {
    const hadHello = this.helloSeen;
    this.teardown(1000, "reconnecting");
    if (this.closed || this.failure) return;
    if (hadHello) {
      this.failedAttempts = 0;
    } else {
      this.failedAttempts += 1;
      this.lastCause = this.lastCause ?? cause;
      if (this.failedAttempts > this.opts.maxRetries) {
        this.fail(
          new RoomStreamError("retries_exhausted", `${this.failedAttempts} connection attempts in a row failed`, undefined, {
            cause: this.lastCause,
          }),
        );
        return;
      }
    }
    const exp = Math.min(this.opts.maxRetryDelayMs, this.opts.retryDelayMs * 2 ** Math.max(0, this.failedAttempts - 1));
    const delay = exp * (0.5 + Math.random() / 2);
    this.retryTimer = setTimeout(() => this.connect(), delay);
  }

  /** Forgets the current connection (its late callbacks are ignored) and stops the timers. */
  private teardown(code: number, reason: string): void {
    this.generation += 1;
    clearTimeout(this.connectTimer);
    clearTimeout(this.retryTimer);
    clearInterval(this.pingTimer);
    this.connectTimer = this.retryTimer = this.pingTimer = undefined;
    const ws = this.socket;
    this.socket = null;
    if (ws) {
      ws.onmessage = ws.onclose = null;
      ws.onerror = () => {}; // `ws` emits an error when closed while still connecting
      try {
        ws.close(code, reason);
      } catch {
        // Already closed.
      }
    }
  }

  private push(frame: RoomFrame): void {
    const w = this.waiters.shift();
    if (w) w.resolve({ value: frame, done: false });
    else this.queue.push(frame);
  }

  private fail(error: RoomStreamError): void {
    if (this.failure || this.closed) return;
    this.failure = error;
    this.teardown(1000, "client gave up");
    // Buffered frames are read first; only then does `next()` reject.
    for (const w of this.waiters.splice(0)) w.reject(error);
  }
}
