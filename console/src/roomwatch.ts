// One watched room: its RoomStream and RoomModel, the connection state the header shows, and what
// the stream cannot say by itself (side conversations' events over REST, sessions a hello left
// out, a log that moved on). It asks the controller (RoomHost, which App is) for the rest: this
// file does not import app.ts, so neither imports the other.

import { RoomStream, RoomStreamError, type EnsembleClient, type RoomFrame } from "../../openapi/clients/typescript/src/index.js";
import type { Event, RoomModel } from "./model.js";
import type { Role } from "./access.js";
import { ApiFailure, call, TOKEN_REVOKED } from "./api.js";

/**
 * `revoked`: the server closed the stream with 4003 (the token was revoked or expired); not retried.
 * `unavailable`: the room cannot be opened with this token (no such room for it, an invalid id, too
 * little role); not retried.
 */
export type ConnectionState = "connecting" | "live" | "reconnecting" | "offline" | "revoked" | "unavailable";

/** A room id as the server takes it (the path's pattern, 1 to 128 characters). */
const ROOM_ID = /^[A-Za-z0-9._~:-]*[A-Za-z0-9_~:-][A-Za-z0-9._~:-]*$/;

/** Why `id` is not a room id, or null when it is one. */
export function roomIdProblem(id: string): string | null {
  if (!id) return "a room id is needed";
  if (id.length > 128) return `a room id has at most 128 characters (this one has ${id.length})`;
  if (!ROOM_ID.test(id)) return "letters, digits and . _ ~ : - only, not only dots";
  return null;
}

/** The room WebSocket's close code for a token revoked or expired while connected. */
export const CLOSE_TOKEN_REVOKED = 4003;

/** What a RoomWatch needs of the console's controller (App). */
export interface RoomHost {
  readonly baseUrl: string;
  readonly token: string | null;
  readonly api: EnsembleClient;
  helloRole: Role | null;
  readonly selectedSession: string | null;
  changed(): void;
  report(text: string, error?: boolean): void;
  tokenRevoked(): void;
  tokenRefused(): void;
  checkToken(): Promise<void>;
  roomCount(roomId: string, sessions: number): void;
  /** The room cannot be opened with this token: it leaves the room list (it stays selected, saying why). */
  roomUnavailable(roomId: string): void;
  usageEvent(model: RoomModel, e: Event): void;
  notice(model: RoomModel, e: Event, live: boolean): void;
  resetRoom(roomId: string): void;
  loadGoal(roomId: string, sessionId: string): Promise<void>;
  loadQueue(roomId: string, sessionId: string): Promise<void>;
  loadUsage(roomId: string, sessionId: string): void;
  loadRoomUsage(roomId: string): void;
  /** Draws a session of the open room (its present and latest turns), once. */
  ensureTail(roomId: string, sessionId: string): void;
}

/** One room's stream and model. */
export class RoomWatch {
  stream: RoomStream | null = null;
  state: ConnectionState = "connecting";
  retryAt = 0;
  error: string | null = null;
  private closed = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private sideFetches = new Map<string, Promise<void>>();
  /** The head seq the first `hello` of this watch said: events after it happened while watched (notifications). */
  private liveFrom: number | null = null;
  /** Whether the REST API was asked why the socket did not open (once per watch). */
  private probed = false;

  constructor(
    readonly app: RoomHost,
    readonly model: RoomModel,
  ) {
    // Live from the head: the open room's sessions are read over REST as they are drawn.
    this.open(undefined);
  }

  private open(after: number | undefined): void {
    if (this.closed) return;
    const watch = this;
    // The stream's sockets, watched for the connection indicator (RoomStream reconnects by itself).
    class TrackedSocket extends WebSocket {
      constructor(url: string, protocols: string[]) {
        super(url, protocols);
        // Registered before RoomStream's own `onclose`: a 4003 stops the stream before it reconnects.
        this.addEventListener("close", (ev) => watch.socketClosed(ev.code));
      }
    }
    const stream = new RoomStream({
      baseUrl: this.app.baseUrl,
      token: this.app.token ?? "",
      roomId: this.model.roomId,
      after,
      WebSocket: TrackedSocket,
      maxRetries: 6,
      maxRetryDelayMs: 4000,
    });
    this.stream = stream;
    void this.read(stream);
  }

  private socketClosed(code: number): void {
    if (this.closed) return;
    // Closed before its first hello: a browser hides the upgrade's status, so ask the REST API
    // whether this room can be opened at all (a 404 or 403 is not worth retrying).
    if (this.state === "connecting" && !this.probed) {
      this.probed = true;
      void this.probe();
    }
    if (code === CLOSE_TOKEN_REVOKED) {
      // The token was revoked or expired: reconnecting cannot help.
      this.app.tokenRevoked();
      return;
    }
    if (this.state === "offline") return;
    if (this.state === "live") {
      this.state = "reconnecting";
      this.app.changed();
    }
  }

  private async read(stream: RoomStream): Promise<void> {
    try {
      for await (const frame of stream) {
        if (stream !== this.stream) return;
        this.frame(frame);
      }
    } catch (e) {
      if (stream !== this.stream || this.closed) return;
      this.failed(e);
    }
  }

  private frame(frame: RoomFrame): void {
    const m = this.model;
    switch (frame.type) {
      case "hello":
        this.state = "live";
        this.error = null;
        m.onHello(frame);
        this.liveFrom ??= frame.headSeq;
        // Where a reopened stream goes on from when no event came yet.
        if (m.lastSeq === 0) m.lastSeq = frame.headSeq;
        if (frame.role) this.app.helloRole = frame.role;
        if (m.full) {
          for (const s of frame.sides) this.fetchSide(s.sessionId);
          if (frame.sessionsTruncated) void this.reloadSessions();
          if (this.app.selectedSession) this.app.ensureTail(m.roomId, this.app.selectedSession);
        }
        this.app.roomCount(m.roomId, m.canonical.length);
        break;
      case "event":
        m.onEvent(frame.event);
        if (frame.event.type === "session.started") this.app.roomCount(m.roomId, m.canonical.length);
        this.app.usageEvent(m, frame.event);
        this.app.notice(m, frame.event, this.liveFrom !== null && frame.event.seq > this.liveFrom);
        break;
      case "side_event":
        if (m.onSideEvent(frame.event) && m.full) this.fetchSide(frame.event.sessionId);
        // Side events come over REST when replayed: a frame is live.
        this.app.notice(m, frame.event, this.liveFrom !== null);
        break;
      case "error":
        this.app.report(`the server did not understand a frame: ${frame.message}`);
        break;
    }
    this.app.changed();
  }

  /** Replays a side conversation's events after the last one applied (a gap, or a new connection). */
  fetchSide(sideId: string): void {
    if (this.sideFetches.has(sideId)) return;
    const run = (async () => {
      try {
        for (;;) {
          const st = this.model.session(sideId);
          const after = st?.sideSeq ?? 0;
          const page = await call(
            this.app.api.GET("/v1/rooms/{roomId}/sessions/{sessionId}/events", {
              params: { path: { roomId: this.model.roomId, sessionId: sideId }, query: { after, limit: 1000 } },
            }),
          );
          for (const e of page.data) this.model.onSideEvent(e);
          this.app.changed();
          if (!page.data.length || page.data[page.data.length - 1]!.seq >= page.headSeq) break;
        }
      } catch (e) {
        // A side that ended is gone from memory (404/410): the room's hello tells the rest.
        if (!(e instanceof ApiFailure && (e.status === 404 || e.status === 410 || e.status === 422))) this.app.report(`replaying side conversation ${sideId}: ${(e as Error).message}`);
      } finally {
        this.sideFetches.delete(sideId);
      }
    })();
    this.sideFetches.set(sideId, run);
  }

  /** The hello did not carry every session: read them (and their sides) over REST. */
  async reloadSessions(): Promise<void> {
    try {
      const room = this.model.roomId;
      const list = await call(this.app.api.GET("/v1/rooms/{roomId}/sessions", { params: { path: { roomId: room } } }));
      this.model.onSnapshots(list.data);
      if (this.model.full && this.app.selectedSession) this.app.ensureTail(room, this.app.selectedSession);
      for (const s of list.data) {
        if (s.status === "completed") continue;
        const sides = await call(this.app.api.GET("/v1/rooms/{roomId}/sessions/{sessionId}/sides", { params: { path: { roomId: room, sessionId: s.sessionId } } }));
        this.model.onSnapshots(sides.data);
        for (const side of sides.data) this.fetchSide(side.sessionId);
      }
      this.app.changed();
    } catch (e) {
      this.app.report(`reloading the room's sessions: ${(e as Error).message}`);
    }
  }

  /** Asks the REST API about the room: a refusal there stops the watch, saying why. */
  private async probe(): Promise<void> {
    const roomId = this.model.roomId;
    try {
      await call(this.app.api.GET("/v1/rooms/{roomId}/sessions", { params: { path: { roomId } } }));
    } catch (e) {
      if (!(e instanceof ApiFailure) || this.closed || this.state === "live") return;
      if (e.status === 401) return void this.app.checkToken();
      if (e.status === 404) this.unavailable(`There is no room "${roomId}" for this token: it names other rooms (Share… makes a token for this one).`);
      else if (e.status === 400 || e.status === 422) this.unavailable(`"${roomId}" is not a room id: ${e.message}`);
      else if (e.status === 403) this.unavailable(`This token may not open room "${roomId}": ${e.message}`);
    }
  }

  /** The room cannot be opened with this token: stop for good, saying why. */
  private unavailable(why: string): void {
    clearTimeout(this.timer);
    const stream = this.stream;
    this.stream = null;
    stream?.close();
    this.state = "unavailable";
    this.error = why;
    this.app.roomUnavailable(this.model.roomId);
    this.app.changed();
  }

  private failed(e: unknown): void {
    if (this.state === "unavailable") return;
    const reason = e instanceof RoomStreamError ? e.reason : "unknown";
    this.stream = null;
    if (e instanceof RoomStreamError && (reason === "history_expired" || reason === "ahead_of_log")) {
      // Reconnecting with after=<last seq> cannot help: reload what is shown and go on from the head.
      const head = e.headSeq ?? 0;
      if (reason === "ahead_of_log") {
        this.app.resetRoom(this.model.roomId);
        return;
      }
      // What was drawn is read again from the server's present (what happened meanwhile included).
      for (const st of this.model.sessions.values()) if (!st.isSide) st.resetLog();
      this.model.lastSeq = head;
      void this.reloadSessions().then(() => Promise.all(this.model.canonical.map((st) => this.app.loadGoal(this.model.roomId, st.id))));
      // The queue's events before the head are gone too: read the open session's again.
      if (this.model.full && this.app.selectedSession) void this.app.loadQueue(this.model.roomId, this.app.selectedSession);
      if (this.model.full && this.app.selectedSession) this.app.loadUsage(this.model.roomId, this.app.selectedSession);
      if (this.model.full) this.app.loadRoomUsage(this.model.roomId);
      this.open(head);
      return;
    }
    if (reason === "refused") {
      // 401/403 on the upgrade (where the WebSocket says so): retrying with the same token cannot help.
      this.state = "offline";
      this.error = (e as Error).message;
      this.app.tokenRefused();
      return;
    }
    // A browser's WebSocket hides a refused upgrade's status: ask the REST API whether it is the token.
    void this.app.checkToken();
    // The server stayed unreachable: try again in a while (the connection indicator says so).
    this.state = "offline";
    this.error = (e as Error).message;
    this.retryAt = Date.now() + 3000;
    this.app.changed();
    this.timer = setTimeout(() => this.retryNow(), 3000);
  }

  retryNow(): void {
    clearTimeout(this.timer);
    if (this.closed || this.stream || this.state === "unavailable") return;
    this.state = "connecting";
    this.app.changed();
    this.open(this.model.full ? this.model.lastSeq : undefined);
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.stream?.close();
    this.stream = null;
  }

  /** Stopped for good because the token no longer works: the model stays shown, read-only. */
  revoke(): void {
    this.close();
    this.state = "revoked";
    this.error = TOKEN_REVOKED;
  }
}
