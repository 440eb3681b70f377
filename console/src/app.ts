// The console's controller: the token, the REST client, one RoomStream per watched room, and the
// selection. The UI reads its fields and calls its methods; `changed()` asks for a render.
//
// Streams: the open room's stream replays from seq 0 (a reload rebuilds the transcript from the
// log; within a page RoomStream reconnects with `after=<last seq>` by itself, so nothing is lost or
// repeated); every other listed room gets a live-only stream that keeps its session count and
// badges current. Side conversations' events are not in the room log: after every `hello` the open
// room's open sides are replayed over REST (`GET …/sessions/{sideId}/events?after=<side seq>`).

import { createEnsembleClient, RoomStream, RoomStreamError, type EnsembleClient, type ErrorResponse, type RoomFrame } from "../../openapi/clients/typescript/src/index.js";
import { RoomModel, type Event, type Session } from "./model.js";
import { errorText } from "./present.js";
import { aboutAttachments, attachmentErrorText, type InputItem } from "./attach.js";
import { allows, type Me, type Role, type TokenInfo } from "./access.js";
import { browserHost, Notifier, sessionName, type Place as NotifyPlace } from "./notify.js";
import type { QueuedTurn, SubmitHow } from "./queue.js";
import { Latest, refreshesUsage, type Budget, type RoomUsage, type SessionUsage } from "./usage.js";
import { sideName } from "./present.js";
import type { Schemas } from "../../openapi/clients/typescript/src/client.js";

export type ProviderInfo = Schemas["ProviderInfo"];
export type Room = Schemas["Room"];
/** `revoked`: the server closed the stream with 4003 (the token was revoked or expired); not retried. */
export type ConnectionState = "connecting" | "live" | "reconnecting" | "offline" | "revoked";

/** The room WebSocket's close code for a token revoked or expired while connected. */
export const CLOSE_TOKEN_REVOKED = 4003;

const TOKEN_KEY = "ensemble.token";
/** Live-only streams for at most this many rooms besides the open one. */
const MAX_WATCHED = 24;

/** An error answer of the API, or a network failure, as one line for a person. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The error's `details`, when the server gave any. */
    readonly details: Record<string, unknown> | null = null,
  ) {
    super(message);
  }
}

/** What the console says when the server answers 401: the token it has is not (or no longer) the server's. */
export const TOKEN_REFUSED = "The server refused this token (401): it is not the server's current token. Paste the token from the console URL the server printed (after #token=), or open that URL.";
/** What the console says when a stream is closed with 4003. */
export const TOKEN_REVOKED = "This token was revoked or has expired (the server closed the connection, 4003): ask whoever shared it for a new link, or paste another token.";
const NO_TOKEN = "No token: open the console URL the server printed (it carries the token after #), or paste the token.";

function failure(error: unknown, response: Response | undefined): ApiFailure {
  const e = (error as ErrorResponse | undefined)?.error;
  const status = response?.status ?? 0;
  if (e) {
    const details = e.details && typeof e.details === "object" ? (e.details as Record<string, unknown>) : null;
    return new ApiFailure(status, e.code, errorText(status, e.code, e.message, details), details);
  }
  return new ApiFailure(status, "http_error", `HTTP ${response?.status ?? "error"}`);
}

/** Unwraps an openapi-fetch result: the data, or throws an ApiFailure. */
export async function call<T>(p: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let r: { data?: T; error?: unknown; response: Response };
  try {
    r = await p;
  } catch (e) {
    throw new ApiFailure(0, "network", `the server cannot be reached (${(e as Error).message})`);
  }
  if (r.error !== undefined || !r.response.ok) throw failure(r.error, r.response);
  return r.data as T;
}

/** A random id for `clientSubmitId` and side `requestId`s. */
export function randomId(prefix: string): string {
  const b = new Uint8Array(8);
  crypto.getRandomValues(b);
  return `${prefix}-${[...b].map((x) => x.toString(16).padStart(2, "0")).join("")}`;
}

/** Where the fragment points: `#room=…&session=…&side=…` (a `token=` in it is `takeToken`'s). */
export interface Place {
  room: string | null;
  session: string | null;
  side: string | null;
}

export function readPlace(hash: string = location.hash): Place {
  const p = new URLSearchParams(hash.replace(/^#/, ""));
  const get = (k: string) => p.get(k)?.trim() || null;
  return { room: get("room"), session: get("session"), side: get("side") };
}

/** Reads the token from `#token=…` (then removed from the address bar) or sessionStorage. */
export function takeToken(): string | null {
  const parts = location.hash.slice(1).split("&").filter(Boolean);
  const given = parts.find((p) => p.startsWith("token="));
  if (given !== undefined) {
    let t = given.slice("token=".length);
    try {
      t = decodeURIComponent(t);
    } catch {
      // keep it as printed
    }
    if (t) sessionStorage.setItem(TOKEN_KEY, t);
    const rest = parts.filter((p) => !p.startsWith("token=")).join("&");
    history.replaceState(null, "", location.pathname + location.search + (rest ? `#${rest}` : ""));
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

/** One room's stream and model. */
class RoomWatch {
  stream: RoomStream | null = null;
  state: ConnectionState = "connecting";
  retryAt = 0;
  error: string | null = null;
  private closed = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private sideFetches = new Map<string, Promise<void>>();
  /** The head seq the first `hello` of this watch said: events after it happened while watched (notifications). */
  private liveFrom: number | null = null;

  constructor(
    readonly app: App,
    readonly model: RoomModel,
  ) {
    this.open(model.full ? 0 : undefined);
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
        if (frame.role) this.app.helloRole = frame.role;
        if (m.full) {
          for (const s of frame.sides) this.fetchSide(s.sessionId);
          if (frame.sessionsTruncated) void this.reloadSessions();
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

  private failed(e: unknown): void {
    const reason = e instanceof RoomStreamError ? e.reason : "unknown";
    this.stream = null;
    if (e instanceof RoomStreamError && (reason === "history_expired" || reason === "ahead_of_log")) {
      // Reconnecting with after=<last seq> cannot help: reload what is shown and go on from the head.
      const head = e.headSeq ?? 0;
      if (reason === "ahead_of_log") {
        this.app.resetRoom(this.model.roomId);
        return;
      }
      for (const st of this.model.sessions.values()) st.transcript.info(`The server no longer keeps this room's events before seq ${head + 1}: what happened meanwhile is not shown.`);
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
    if (this.closed || this.stream) return;
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

export class App {
  readonly baseUrl = location.origin;
  token: string | null = null;
  api: EnsembleClient;
  rooms = new Map<string, Room>();
  providers: ProviderInfo[] = [];
  /** Why the token is needed again (401), or null. */
  tokenProblem: string | null = null;
  /** Who the token is (`GET /v1/me`), once read. */
  me: Me | null = null;
  /** The role the last `hello` said (the same token's: known before `/v1/me` answers). */
  helloRole: Role | null = null;
  /** The server closed a stream with 4003: the token was revoked or has expired. */
  revoked = false;
  /** The Share dialog is open (admin). */
  shareOpen = false;
  selectedRoom: string | null = null;
  selectedSession: string | null = null;
  /** The side conversation shown beside the session, if any. */
  selectedSide: string | null = null;
  messages: { id: number; text: string; error: boolean }[] = [];
  private watches = new Map<string, RoomWatch>();
  private listeners = new Set<() => void>();
  private scheduled = false;
  private messageId = 0;
  private roomPoll: ReturnType<typeof setInterval> | undefined;
  /** The interactions (room/session/request) that already took the focus once (see `claimFocus`). */
  private focused = new Set<string>();
  /** What each session spent and its budget (`GET …/usage`), by room and session, kept current from the open room's events. */
  private usageFeeds = new Map<string, Latest<SessionUsage>>();
  /** What each room spent and its budget (`GET /v1/rooms/{roomId}/usage`). */
  private roomUsageFeeds = new Map<string, Latest<RoomUsage>>();
  /** Browser notifications of the watched rooms (asked for from the console's prompt). */
  readonly notifier = new Notifier(browserHost(), (place) => this.openPlace(place));

  constructor() {
    this.token = takeToken();
    this.api = createEnsembleClient({ baseUrl: this.baseUrl, token: this.token ?? "" });
  }

  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Something changed: render once, soon. */
  changed(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setTimeout(() => {
      this.scheduled = false;
      for (const fn of this.listeners) fn();
    }, 0);
  }

  report(text: string, error = true): void {
    this.messages = [...this.messages.slice(-3), { id: ++this.messageId, text, error }];
    this.changed();
  }

  dismiss(id: number): void {
    this.messages = this.messages.filter((m) => m.id !== id);
    this.changed();
  }

  /** Runs a REST action; a failure is reported (and a 401 asks for the token again). */
  async act<T>(what: string, fn: () => Promise<T>): Promise<T | undefined> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof ApiFailure && e.status === 401) {
        // Said once, in the token box: not again as every call's failure.
        this.tokenRefused();
        return undefined;
      }
      this.report(`${what} failed: ${(e as Error).message}`);
      return undefined;
    }
  }

  /** The token's role, once known (null: not yet, or the token no longer works). */
  get role(): Role | null {
    if (this.revoked || !this.token) return null;
    return this.me?.role ?? this.helloRole;
  }

  /** Whether the token may do what needs `need` (the server checks again; this only hides what it would refuse). */
  may(need: Role): boolean {
    return allows(this.role, need);
  }

  openShare(open: boolean): void {
    this.shareOpen = open;
    this.changed();
  }

  /** A stream was closed with 4003: every stream stops (no reconnecting), and the token box says why. */
  tokenRevoked(): void {
    if (this.revoked) return;
    this.revoked = true;
    for (const w of this.watches.values()) w.revoke();
    clearInterval(this.roomPoll);
    this.tokenProblem = TOKEN_REVOKED;
    this.changed();
  }

  /** The server answered 401 (or refused the WebSocket): the token is wrong or no longer the server's. */
  tokenRefused(): void {
    if (this.tokenProblem === TOKEN_REFUSED || this.revoked) return;
    this.tokenProblem = TOKEN_REFUSED;
    this.changed();
  }

  /** Whether the server still takes the token (a failed WebSocket does not say why in a browser). */
  async checkToken(): Promise<void> {
    if (!this.token) return;
    try {
      await call(this.api.GET("/v1/rooms"));
    } catch (e) {
      if (e instanceof ApiFailure && e.status === 401) this.tokenRefused();
    }
  }

  start(): void {
    window.removeEventListener("hashchange", this.onHashChange);
    window.addEventListener("hashchange", this.onHashChange);
    if (!this.token) {
      this.tokenProblem = NO_TOKEN;
      this.changed();
      return;
    }
    this.tokenProblem = null;
    this.revoked = false;
    const place = readPlace();
    if (place.room) this.openRoom(place.room, place.session, place.side);
    void this.loadMe();
    void this.loadProviders();
    void this.loadRooms();
    // New rooms appear without a refresh: the API has no server-wide stream, so the list is read
    // again now and then; counts of known rooms come from their streams.
    clearInterval(this.roomPoll);
    this.roomPoll = setInterval(() => void this.loadRooms(true), 10_000);
  }

  useToken(token: string): void {
    sessionStorage.setItem(TOKEN_KEY, token);
    this.token = token;
    this.me = null;
    this.helloRole = null;
    this.api = createEnsembleClient({ baseUrl: this.baseUrl, token });
    for (const w of this.watches.values()) w.close();
    this.watches.clear();
    const [room, session, side] = [this.selectedRoom, this.selectedSession, this.selectedSide];
    this.start();
    if (room && !this.watches.get(room)?.model.full) this.openRoom(room, session, side);
  }

  /**
   * The fragment changed (typed in the address bar, a link, `location.hash = …`): take a token it
   * carries, and go where it points. The console's own fragment updates use `history.replaceState`,
   * which fires no `hashchange`, so this only follows what someone else changed.
   */
  readonly onHashChange = (): void => {
    const hadToken = /(^#?|&)token=/.test(location.hash);
    const place = readPlace();
    const before = this.token;
    const token = takeToken();
    if (token && token !== before) {
      // A new token: every stream reconnects with it; the place is the fragment's, else the current one.
      this.selectedRoom = place.room ?? this.selectedRoom;
      this.selectedSession = place.room ? place.session : this.selectedSession;
      this.selectedSide = place.room ? place.side : this.selectedSide;
      this.useToken(token);
      this.syncHash();
      return;
    }
    if (!this.token) return;
    if (!place.room) {
      if (hadToken) {
        // Only the (same) token: stay where we are, and say so in the address bar again.
        this.syncHash();
        return;
      }
      if (this.selectedRoom === null) return;
      this.selectedRoom = null;
      this.selectedSession = null;
      this.selectedSide = null;
      this.changed();
      return;
    }
    if (place.room !== this.selectedRoom) {
      this.openRoom(place.room, place.session, place.side);
      return;
    }
    if (place.session !== this.selectedSession) {
      this.selectSession(place.session);
      if (place.side) this.selectSide(place.side);
      return;
    }
    if (place.side !== this.selectedSide) this.selectSide(place.side);
    else this.syncHash();
  };

  /**
   * Whether an interaction that just appeared may move the focus to its answer: once per
   * interaction, so re-rendering it (or coming back to its session) never steals the focus again.
   */
  claimFocus(sessionId: string, requestId: string): boolean {
    const key = `${this.selectedRoom ?? ""}/${sessionId}/${requestId}`;
    if (this.focused.has(key)) return false;
    this.focused.add(key);
    return true;
  }

  forgetToken(): void {
    sessionStorage.removeItem(TOKEN_KEY);
    window.removeEventListener("hashchange", this.onHashChange);
    history.replaceState(null, "", location.pathname + location.search);
    location.reload();
  }

  /** Who the token is: its name and role (the header says them; the controls follow the role). */
  async loadMe(): Promise<void> {
    const token = this.token;
    try {
      const me = await call(this.api.GET("/v1/me"));
      if (this.token !== token) return;
      this.me = me;
      this.changed();
    } catch (e) {
      if (e instanceof ApiFailure && e.status === 401) this.tokenRefused();
      // Otherwise the hello's role is enough.
    }
  }

  async loadProviders(): Promise<void> {
    const list = await this.act("listing providers", () => call(this.api.GET("/v1/providers")));
    if (list) {
      this.providers = list.data;
      this.changed();
    }
  }

  async loadRooms(quiet = false): Promise<void> {
    try {
      const list = await call(this.api.GET("/v1/rooms"));
      for (const r of list.data) {
        const known = this.rooms.get(r.roomId);
        const watched = this.watches.get(r.roomId);
        // A watched room's count comes from its stream.
        this.rooms.set(r.roomId, watched?.state === "live" && known ? known : r);
      }
      this.watchRooms();
      this.changed();
    } catch (e) {
      if (e instanceof ApiFailure && e.status === 401) this.tokenRefused();
      else if (!quiet) void this.act("listing rooms", () => Promise.reject(e));
    }
  }

  private watchRooms(): void {
    if (this.revoked) return;
    let n = 0;
    for (const id of this.rooms.keys()) {
      if (this.watches.has(id)) {
        n++;
        continue;
      }
      if (n >= MAX_WATCHED) break;
      this.watches.set(id, new RoomWatch(this, new RoomModel(id, id === this.selectedRoom)));
      n++;
    }
  }

  roomCount(roomId: string, sessions: number): void {
    const r = this.rooms.get(roomId);
    this.rooms.set(roomId, { roomId, headSeq: Math.max(r?.headSeq ?? 0, this.watches.get(roomId)?.model.headSeq ?? 0), sessionCount: sessions });
  }

  watch(roomId: string): RoomWatch | undefined {
    return this.watches.get(roomId);
  }

  room(roomId: string | null = this.selectedRoom): RoomModel | undefined {
    return roomId === null ? undefined : this.watches.get(roomId)?.model;
  }

  /** Every watched room's model (the open one and the live-only ones). */
  watchedRooms(): RoomModel[] {
    return [...this.watches.values()].map((w) => w.model);
  }

  /** An event of a watched room, for the browser notifications (`live`: not a replay). */
  notice(model: RoomModel, e: Event, live: boolean): void {
    if (!live) return;
    const st = model.session(e.sessionId);
    if (!st) return;
    const source = st.isSide ? st.session.sourceSessionId ?? null : null;
    const place: NotifyPlace = { room: model.roomId, session: source ?? st.id, side: source ? st.id : null };
    this.notifier.event(place, () => (st.isSide ? sideName(model, st) : sessionName(st)), e, live);
  }

  /** Asks the browser for notifications (from the prompt's click: a user gesture). */
  async enableNotifications(): Promise<void> {
    const p = await this.notifier.enable();
    if (p === "denied") this.report("Notifications are blocked for this page: the browser's site settings can allow them.", false);
    this.changed();
  }

  dismissNotifications(): void {
    this.notifier.dismiss();
    this.changed();
  }

  /** A notification was clicked: its session (and side conversation) is opened. */
  openPlace(place: NotifyPlace): void {
    if (this.selectedRoom !== place.room || !this.room(place.room)?.full) this.openRoom(place.room, place.session, place.side);
    else {
      if (this.selectedSession !== place.session) this.selectSession(place.session);
      if (place.side) this.selectSide(place.side);
    }
    this.changed();
  }

  /** Opens a room: its stream replays the whole log (the transcript) and stays live. */
  openRoom(roomId: string, sessionId: string | null = null, sideId: string | null = null): void {
    roomId = roomId.trim();
    if (!roomId) return;
    if (this.revoked) {
      // Nothing can be read with this token any more: only what is already shown.
      this.selectedRoom = roomId;
      this.selectedSession = sessionId;
      this.selectedSide = sideId;
      this.syncHash();
      this.changed();
      return;
    }
    this.selectedRoom = roomId;
    this.selectedSession = sessionId;
    this.selectedSide = sideId;
    if (!this.rooms.has(roomId)) this.rooms.set(roomId, { roomId, sessionCount: 0, headSeq: 0 });
    const w = this.watches.get(roomId);
    if (!w || !w.model.full) {
      w?.close();
      this.watches.set(roomId, new RoomWatch(this, new RoomModel(roomId, true)));
    }
    this.syncHash();
    this.changed();
    this.loadRoomUsage(roomId);
    // The session's open side conversations are found again (a reload, a link), and shown.
    if (sessionId) {
      void this.findSides(roomId, sessionId);
      void this.loadQueue(roomId, sessionId);
      this.loadUsage(roomId, sessionId);
    }
  }

  /** The server's log no longer matches (its data was replaced): start the room over from seq 0. */
  resetRoom(roomId: string): void {
    this.watches.get(roomId)?.close();
    this.watches.set(roomId, new RoomWatch(this, new RoomModel(roomId, roomId === this.selectedRoom)));
    this.report(`Room ${roomId}: the server's history was replaced; replaying it from the start.`, false);
  }

  /** Shows a side conversation beside its session (null: none). */
  selectSide(sideId: string | null): void {
    this.selectedSide = sideId;
    this.syncHash();
    this.changed();
  }

  selectSession(sessionId: string | null): void {
    this.selectedSession = sessionId;
    this.selectedSide = null;
    this.syncHash();
    this.changed();
    if (sessionId && this.selectedRoom) {
      void this.findSides(this.selectedRoom, sessionId);
      void this.loadQueue(this.selectedRoom, sessionId);
      this.loadUsage(this.selectedRoom, sessionId);
    }
  }

  /** The open side conversations of a session, over REST (besides the hello's list). */
  async findSides(roomId: string, sessionId: string): Promise<void> {
    try {
      const sides = await call(this.api.GET("/v1/rooms/{roomId}/sessions/{sessionId}/sides", { params: { path: { roomId, sessionId } } }));
      const model = this.room(roomId);
      if (!model || !sides.data.length) return;
      model.onSnapshots(sides.data);
      for (const s of sides.data) this.watch(roomId)?.fetchSide(s.sessionId);
      if (!this.selectedSide && this.selectedSession === sessionId) this.selectSide(sides.data[sides.data.length - 1]!.sessionId);
      this.changed();
    } catch {
      // Only a convenience: the hello lists open sides too.
    }
  }

  private syncHash(): void {
    const p = new URLSearchParams();
    if (this.selectedRoom) p.set("room", this.selectedRoom);
    if (this.selectedSession) p.set("session", this.selectedSession);
    if (this.selectedSession && this.selectedSide) p.set("side", this.selectedSide);
    const hash = p.toString();
    history.replaceState(null, "", location.pathname + location.search + (hash ? `#${hash}` : ""));
  }

  // ---- actions ----

  private path(sessionId: string) {
    return { path: { roomId: this.selectedRoom ?? "", sessionId } };
  }

  async startSession(roomId: string, body: Schemas["StartSessionRequest"]): Promise<Session | undefined> {
    const s = await this.act("starting a session", () => call(this.api.POST("/v1/rooms/{roomId}/sessions", { params: { path: { roomId } }, body })));
    if (s) {
      if (this.selectedRoom !== roomId) this.openRoom(roomId);
      this.room(roomId)?.onSnapshots([s]);
      this.selectSession(s.sessionId);
      this.roomCount(roomId, this.room(roomId)?.canonical.length ?? 1);
    }
    return s;
  }

  /**
   * Sends a turn, steers the running one, or queues a follow-up (`how`). A refusal about its images
   * (the agent takes none, one too large) is handed back for the composer to show beside them, and
   * so is any refusal to queue (`queue_full`, …) or a reached budget (`budget_exhausted`); any
   * other is reported.
   */
  async submit(sessionId: string, input: InputItem[], how: SubmitHow): Promise<{ ok: true; queued: boolean } | { ok: false; attachmentError: string | null; queueError: string | null; budgetError?: string }> {
    const body: Schemas["SubmitTurnRequest"] = { input, clientSubmitId: randomId("console") };
    if (how === "steer") body.steer = true;
    if (how === "queue") body.queue = true;
    const r = await this.attempt(() => call(this.api.POST("/v1/rooms/{roomId}/sessions/{sessionId}/turns", { params: this.path(sessionId), body })));
    if (r.ok) return { ok: true, queued: r.data.queued };
    const e = r.error;
    if (e.status === 401) return { ok: false, attachmentError: null, queueError: null };
    if (aboutAttachments(e.code, e.message, input)) return { ok: false, attachmentError: attachmentErrorText(e.code, e.message, input), queueError: null };
    if (how === "queue") return { ok: false, attachmentError: null, queueError: `Not queued: ${e.message}` };
    if (e.code === "budget_exhausted") {
      // Said where the text waits (raise the budget, then send it again); the header shows it reached.
      if (this.selectedRoom) this.loadUsage(this.selectedRoom, sessionId);
      return { ok: false, attachmentError: null, queueError: null, budgetError: `Not sent: ${e.message}` };
    }
    this.report(`${how === "steer" ? "steering" : "sending"} failed: ${e.message}`);
    return { ok: false, attachmentError: null, queueError: null };
  }

  // ---- usage and budgets ----

  private usageFeed(roomId: string, sessionId: string): Latest<SessionUsage> {
    const key = JSON.stringify([roomId, sessionId]);
    let feed = this.usageFeeds.get(key);
    if (!feed) {
      feed = new Latest(
        () => call(this.api.GET("/v1/rooms/{roomId}/sessions/{sessionId}/usage", { params: { path: { roomId, sessionId } } })),
        () => this.changed(),
      );
      this.usageFeeds.set(key, feed);
    }
    return feed;
  }

  private roomUsageFeed(roomId: string): Latest<RoomUsage> {
    let feed = this.roomUsageFeeds.get(roomId);
    if (!feed) {
      feed = new Latest(
        () => call(this.api.GET("/v1/rooms/{roomId}/usage", { params: { path: { roomId } } })),
        () => this.changed(),
      );
      this.roomUsageFeeds.set(roomId, feed);
    }
    return feed;
  }

  /** A session's usage as last read (null: not read yet). */
  sessionUsage(sessionId: string, roomId: string | null = this.selectedRoom): SessionUsage | null {
    return roomId === null ? null : (this.usageFeeds.get(JSON.stringify([roomId, sessionId]))?.value ?? null);
  }

  /** A room's usage as last read (null: not read yet). */
  roomUsage(roomId: string | null = this.selectedRoom): RoomUsage | null {
    return roomId === null ? null : (this.roomUsageFeeds.get(roomId)?.value ?? null);
  }

  /** Reads a session's usage now (it is opened). */
  loadUsage(roomId: string, sessionId: string): void {
    if (this.revoked || this.room(roomId)?.session(sessionId)?.isSide) return;
    void this.usageFeed(roomId, sessionId).now();
  }

  /** Reads a room's usage now (it is opened). */
  loadRoomUsage(roomId: string): void {
    if (this.revoked) return;
    void this.roomUsageFeed(roomId).now();
  }

  /**
   * An event of a watched room: what may have changed spending or reached a budget has the open
   * session's usage and the open room's read again, once the events pause.
   */
  usageEvent(model: RoomModel, e: Event): void {
    if (!model.full || model.roomId !== this.selectedRoom || !refreshesUsage(e.type)) return;
    if (e.sessionId === this.selectedSession) this.usageFeed(model.roomId, e.sessionId).soon();
    this.roomUsageFeed(model.roomId).soon();
  }

  /** Sets (`budget`) or clears (null: the server's default again) the session's own budget. */
  setBudget(sessionId: string, budget: Budget | null) {
    const roomId = this.selectedRoom ?? "";
    const params = { path: { roomId, sessionId } };
    return this.attempt(() =>
      this.usageFeed(roomId, sessionId).run(() =>
        call(budget ? this.api.PUT("/v1/rooms/{roomId}/sessions/{sessionId}/budget", { params, body: budget }) : this.api.DELETE("/v1/rooms/{roomId}/sessions/{sessionId}/budget", { params })),
      ),
    );
  }

  /** Sets (`budget`) or clears (null: the server's default again) the room's own budget. */
  setRoomBudget(roomId: string, budget: Budget | null) {
    const params = { path: { roomId } };
    return this.attempt(() =>
      this.roomUsageFeed(roomId).run(() => call(budget ? this.api.PUT("/v1/rooms/{roomId}/budget", { params, body: budget }) : this.api.DELETE("/v1/rooms/{roomId}/budget", { params }))),
    );
  }

  // ---- the queue of follow-ups ----

  /** The session's queue over REST (opening it): taken unless a `queue.updated` came meanwhile. */
  async loadQueue(roomId: string, sessionId: string): Promise<void> {
    const before = this.room(roomId)?.session(sessionId);
    if (before?.isSide) return;
    const rev = before?.queueRev ?? 0;
    try {
      const list = await call(this.api.GET("/v1/rooms/{roomId}/sessions/{sessionId}/queue", { params: { path: { roomId, sessionId } } }));
      if (this.room(roomId)?.session(sessionId)?.queueFromRest(list.data, rev)) this.changed();
    } catch {
      // The room's events say the same (a server without queues, a session gone: nothing to show).
    }
  }

  /** The open session's queued turns with their whole input (`GET …/queue`; events show a preview). */
  async queued(sessionId: string): Promise<QueuedTurn[]> {
    return (await call(this.api.GET("/v1/rooms/{roomId}/sessions/{sessionId}/queue", { params: this.path(sessionId) }))).data;
  }

  /** Puts the queue in a new order (every queued turn once). */
  reorderQueue(sessionId: string, order: string[]) {
    return this.attempt(() => call(this.api.PUT("/v1/rooms/{roomId}/sessions/{sessionId}/queue", { params: this.path(sessionId), body: { order } })));
  }

  /** New input for a queued turn. */
  editQueued(sessionId: string, turnId: string, input: InputItem[]) {
    return this.attempt(() =>
      call(this.api.PATCH("/v1/rooms/{roomId}/sessions/{sessionId}/queue/{turnId}", { params: { path: { roomId: this.selectedRoom ?? "", sessionId, turnId } }, body: { input } })),
    );
  }

  /** Takes a turn off the queue. */
  removeQueued(sessionId: string, turnId: string) {
    return this.attempt(async () => {
      const r = await this.api.DELETE("/v1/rooms/{roomId}/sessions/{sessionId}/queue/{turnId}", { params: { path: { roomId: this.selectedRoom ?? "", sessionId, turnId } } });
      if (r.error !== undefined || !r.response.ok) throw failure(r.error, r.response);
    });
  }

  /** Sends a queued turn now: steered into the running turn, or first after canceling it. */
  sendQueued(sessionId: string, turnId: string) {
    return this.attempt(() =>
      call(this.api.POST("/v1/rooms/{roomId}/sessions/{sessionId}/queue/{turnId}/send", { params: { path: { roomId: this.selectedRoom ?? "", sessionId, turnId } } })),
    );
  }

  /** An image of one of the session's turns (`attachment` in its input), read with the token. */
  async attachment(sessionId: string, attachment: string): Promise<Blob> {
    const r = await this.api.GET("/v1/rooms/{roomId}/sessions/{sessionId}/attachments/{attachment}", {
      params: { path: { roomId: this.selectedRoom ?? "", sessionId, attachment } },
      parseAs: "blob",
    });
    if (r.error !== undefined || !r.response.ok) throw failure(r.error, r.response);
    return r.data as Blob;
  }

  cancel(sessionId: string) {
    return this.act("canceling", () => call(this.api.POST("/v1/rooms/{roomId}/sessions/{sessionId}/cancel", { params: this.path(sessionId) })));
  }

  resume(sessionId: string) {
    return this.act("resuming", () => call(this.api.POST("/v1/rooms/{roomId}/sessions/{sessionId}/resume", { params: this.path(sessionId) })));
  }

  release(sessionId: string) {
    return this.act("releasing", () => call(this.api.POST("/v1/rooms/{roomId}/sessions/{sessionId}/release", { params: this.path(sessionId) })));
  }

  async close(sessionId: string) {
    await this.act("closing", async () => {
      const r = await this.api.DELETE("/v1/rooms/{roomId}/sessions/{sessionId}", { params: this.path(sessionId) });
      if (r.error !== undefined || !r.response.ok) throw failure(r.error, r.response);
    });
    if (this.selectedSide === sessionId) this.selectSide(null);
    this.changed();
  }

  configure(sessionId: string, body: Schemas["ConfigRequest"]) {
    return this.act("changing the settings", () => call(this.api.PATCH("/v1/rooms/{roomId}/sessions/{sessionId}/config", { params: this.path(sessionId), body })));
  }

  answer(sessionId: string, requestId: string, body: Schemas["AnswerRequest"]) {
    return this.act("answering", () =>
      call(this.api.POST("/v1/rooms/{roomId}/sessions/{sessionId}/interactions/{requestId}", { params: { path: { roomId: this.selectedRoom ?? "", sessionId, requestId } }, body })),
    );
  }

  async openSide(sessionId: string): Promise<void> {
    const opened = await this.act("opening a side conversation", () =>
      call(this.api.POST("/v1/rooms/{roomId}/sessions/{sessionId}/sides", { params: this.path(sessionId), body: { requestId: randomId("side") } })),
    );
    if (!opened) return;
    const model = this.room();
    model?.onSnapshots([opened.session]);
    this.selectSide(opened.session.sessionId);
    this.watch(this.selectedRoom ?? "")?.fetchSide(opened.session.sessionId);
    this.changed();
  }

  sideCapabilities(sessionId: string) {
    return call(this.api.GET("/v1/rooms/{roomId}/sessions/{sessionId}/side-capabilities", { params: this.path(sessionId) }));
  }

  /**
   * Runs a REST call and hands back its failure instead of reporting it (the caller shows it where
   * it belongs, e.g. in a dialog); a 401 still asks for the token again.
   */
  async attempt<T>(fn: () => Promise<T>): Promise<{ ok: true; data: T } | { ok: false; error: ApiFailure }> {
    try {
      return { ok: true, data: await fn() };
    } catch (e) {
      const error = e instanceof ApiFailure ? e : new ApiFailure(0, "error", (e as Error).message);
      if (error.status === 401) this.tokenRefused();
      return { ok: false, error };
    }
  }

  // ---- workspaces ----

  /** A turn's changes (`turn`), or the session's base to its latest checkpoint (none); `path`: one file's diff. */
  changes(sessionId: string, q: { turn?: string; path?: string }) {
    return call(this.api.GET("/v1/rooms/{roomId}/sessions/{sessionId}/changes", { params: { ...this.path(sessionId), query: { turn: q.turn, path: q.path } } }));
  }

  /** Puts the working tree back to a checkpoint (announced as `workspace.restored`). */
  restore(sessionId: string, checkpoint: string) {
    return this.act("restoring the workspace", () => call(this.api.POST("/v1/rooms/{roomId}/sessions/{sessionId}/restore", { params: this.path(sessionId), body: { checkpoint } })));
  }

  /** A new session through turn `atTurn` of this one, in a worktree of its own: selected once made. */
  async fork(sessionId: string, atTurn: string): Promise<Session | undefined> {
    const room = this.selectedRoom;
    const s = await this.act("forking", () => call(this.api.POST("/v1/rooms/{roomId}/sessions/{sessionId}/fork", { params: this.path(sessionId), body: { atTurn } })));
    if (s && room) {
      this.room(room)?.onSnapshots([s]);
      if (this.selectedRoom === room) this.selectSession(s.sessionId);
      this.roomCount(room, this.room(room)?.canonical.length ?? 1);
    }
    return s;
  }

  commit(sessionId: string, message: string) {
    return this.attempt(() => call(this.api.POST("/v1/rooms/{roomId}/sessions/{sessionId}/workspace/commit", { params: this.path(sessionId), body: { message } })));
  }

  listFiles(sessionId: string, path: string) {
    return call(this.api.GET("/v1/rooms/{roomId}/sessions/{sessionId}/files", { params: { ...this.path(sessionId), query: { path } } }));
  }

  fileContent(sessionId: string, path: string) {
    return call(this.api.GET("/v1/rooms/{roomId}/sessions/{sessionId}/files/content", { params: { ...this.path(sessionId), query: { path } } }));
  }

  searchFiles(sessionId: string, q: string) {
    return call(this.api.GET("/v1/rooms/{roomId}/sessions/{sessionId}/files/search", { params: { ...this.path(sessionId), query: { q, limit: 50 } } }));
  }

  /** A session's goal over REST: only needed when the room's log no longer has its goal events. */
  async loadGoal(roomId: string, sessionId: string): Promise<void> {
    try {
      const goal = await call(this.api.GET("/v1/rooms/{roomId}/sessions/{sessionId}/goal", { params: { path: { roomId, sessionId } } }));
      const st = this.room(roomId)?.session(sessionId);
      if (st && (!st.goal || goal.updatedAtMs >= st.goal.updatedAtMs)) {
        st.goal = goal;
        this.changed();
      }
    } catch {
      // 404 no_goal, 422 goals_unsupported: nothing to show beyond what the stream says.
    }
  }

  setGoal(sessionId: string, objective: string) {
    return this.act("setting the goal", () =>
      call(this.api.PUT("/v1/rooms/{roomId}/sessions/{sessionId}/goal", { params: this.path(sessionId), body: { objective, clientSubmitId: randomId("goal") } })),
    );
  }

  pauseGoal(sessionId: string) {
    return this.act("pausing the goal", () =>
      call(this.api.POST("/v1/rooms/{roomId}/sessions/{sessionId}/goal/pause", { params: { ...this.path(sessionId), query: { clientSubmitId: randomId("goal") } } })),
    );
  }

  resumeGoal(sessionId: string) {
    return this.act("resuming the goal", () =>
      call(this.api.POST("/v1/rooms/{roomId}/sessions/{sessionId}/goal/resume", { params: { ...this.path(sessionId), query: { clientSubmitId: randomId("goal") } } })),
    );
  }

  // ---- access (admin) ----

  listTokens() {
    return call(this.api.GET("/v1/tokens"));
  }

  createToken(body: Schemas["CreateToken"]) {
    return this.attempt(() => call(this.api.POST("/v1/tokens", { body })));
  }

  revokeToken(tokenId: string) {
    return this.attempt(() => call(this.api.DELETE("/v1/tokens/{tokenId}", { params: { path: { tokenId } } })));
  }

  clearGoal(sessionId: string) {
    return this.act("clearing the goal", async () => {
      const r = await this.api.DELETE("/v1/rooms/{roomId}/sessions/{sessionId}/goal", { params: { ...this.path(sessionId), query: { clientSubmitId: randomId("goal") } } });
      if (r.error !== undefined || !r.response.ok) throw failure(r.error, r.response);
    });
  }
}

export type { Event, TokenInfo };
