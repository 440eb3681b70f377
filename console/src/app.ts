// The console's controller: the token, the REST client, one RoomStream per watched room, and the
// selection. The UI reads its fields and calls its methods; `changed()` asks for a render.
//
// Streams: every watched room's stream is live from its head (within a page RoomStream reconnects
// with `after=<last seq>` by itself, so nothing is lost or repeated); the open room's sessions are
// drawn from REST when shown — their present (`GET …/present`) and their latest turns
// (`GET …/events?before=`), older turns as the transcript is scrolled up — so opening a room costs
// what is on the screen, not the room's age. Every other listed room's stream keeps its session
// count and badges current. Side conversations' events are not in the room log: after every
// `hello` the open room's open sides are replayed over REST (`…/sessions/{sideId}/events?after=`).
//
// The controller is built in layers, each a file: AppCore (core.ts: state, renders, messages),
// Actions (actions.ts: the REST actions), App (here: the token, the streams, the selection); one
// RoomWatch (roomwatch.ts) per watched room, and the REST helpers in api.ts.

import { createEnsembleClient } from "../../openapi/clients/typescript/src/index.js";
import { RoomModel, type Event, type SessionState } from "./model.js";
import type { TokenInfo } from "./access.js";
import type { Place as NotifyPlace } from "./notify.js";
import { ApiFailure, call, type ProviderInfo } from "./api.js";
import { RoomWatch } from "./roomwatch.js";
import { Actions } from "./actions.js";

const TOKEN_KEY = "ensemble.token";
/** Live-only streams for at most this many rooms besides the open one. */
const MAX_WATCHED = 24;
/** A session's first drawing reads back until it holds this many turns' starts; so does each older read. */
const TURNS_PER_READ = 4;
/** Events per page of a session's log, and at most this many pages per read. */
const PAGE_EVENTS = 100;
const MAX_PAGES_PER_READ = 10;
const NO_TOKEN = "No token: open the console URL the server printed (it carries the token after #), or paste the token.";

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

export class App extends Actions {
  constructor() {
    super();
    this.token = takeToken();
    this.api = createEnsembleClient({ baseUrl: this.baseUrl, token: this.token ?? "" });
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

  roomUnavailable(roomId: string): void {
    this.rooms.delete(roomId);
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
    this.newSessionOpen = false;
    this.page = null;
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
    this.newSessionOpen = false;
    this.page = null;
    this.selectedSession = sessionId;
    this.selectedSide = null;
    this.syncHash();
    this.changed();
    if (sessionId && this.selectedRoom) {
      this.ensureTail(this.selectedRoom, sessionId);
      void this.findSides(this.selectedRoom, sessionId);
      void this.loadQueue(this.selectedRoom, sessionId);
      this.loadUsage(this.selectedRoom, sessionId);
    }
  }

  /** Draws a canonical session of the open room once: its present, then its latest turns. */
  ensureTail(roomId: string, sessionId: string): void {
    const model = this.room(roomId);
    const st = model?.session(sessionId);
    if (!model?.full || !st || st.isSide || st.logState !== "none") return;
    st.logState = "loading";
    void this.readTail(roomId, st);
  }

  private async readTail(roomId: string, st: SessionState): Promise<void> {
    const path = { roomId, sessionId: st.id };
    try {
      const present = await call(this.api.GET("/v1/rooms/{roomId}/sessions/{sessionId}/present", { params: { path } }));
      if (st.logState !== "loading") return;
      st.fromPresent(present);
      this.changed();
      const { events, prev } = await this.readBack(path, present.headSeq + 1);
      if (st.logState !== "loading") return;
      st.addPage(events, prev);
    } catch (e) {
      if (st.logState === "loading") st.logState = "none";
      this.report(`reading session ${st.id}: ${(e as Error).message}`);
    }
    this.changed();
  }

  /** Older turns of a session (its transcript was scrolled to its top). */
  async loadOlder(st: SessionState): Promise<void> {
    const before = st.olderBefore;
    if (before === null || st.loadingOlder || st.logState !== "ready") return;
    st.loadingOlder = true;
    this.changed();
    try {
      const { events, prev } = await this.readBack({ roomId: st.session.roomId, sessionId: st.id }, before);
      if (st.logState === "ready") st.addPage(events, prev);
    } catch (e) {
      this.report(`reading earlier turns of ${st.id}: ${(e as Error).message}`);
    } finally {
      st.loadingOlder = false;
      this.changed();
    }
  }

  /** What a fork inherited is its source's: its turns are read back until the fork point is among them. */
  ensureInherited(st: SessionState): void {
    const from = st.isSide ? null : st.session.forkedFrom;
    const source = from ? this.room(st.session.roomId)?.session(from.sessionId) : undefined;
    if (!from || !source) return;
    if (source.logState === "none") this.ensureTail(st.session.roomId, source.id);
    else if (source.logState === "ready" && !source.transcript.through(from.turnId).length) void this.loadOlder(source);
  }

  /**
   * A session's events back from `before`, oldest first: pages until they hold `TURNS_PER_READ`
   * turns' starts, the session's first event, or `MAX_PAGES_PER_READ` pages.
   */
  private async readBack(path: { roomId: string; sessionId: string }, before: number): Promise<{ events: Event[]; prev: number | null }> {
    let events: Event[] = [];
    let prev: number | null = before;
    let turns = 0;
    for (let i = 0; i < MAX_PAGES_PER_READ && prev !== null && turns < TURNS_PER_READ; i++) {
      const query = { before: prev, limit: PAGE_EVENTS };
      const page: { data: Event[]; prev?: number | null } = await call(this.api.GET("/v1/rooms/{roomId}/sessions/{sessionId}/events", { params: { path, query } }));
      events = [...page.data, ...events];
      turns += page.data.filter((e) => e.type === "turn.started").length;
      prev = page.prev ?? null;
    }
    return { events, prev };
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
}

export type { Event, ProviderInfo, TokenInfo };
