// The base of the console's controller (App, in app.ts): the state the UI reads (rooms, providers,
// the token's problem and role, the selection, messages), asking for a render, how an action's
// failure is reported, and the watched rooms as the UI and notifications see them. actions.ts
// adds the REST actions on top, app.ts the token, the streams' lifecycle and the selection.

import type { EnsembleClient } from "../../openapi/clients/typescript/src/index.js";
import type { Event, RoomModel } from "./model.js";
import { allows, type Me, type Role } from "./access.js";
import { browserHost, Notifier, sessionName, type Place as NotifyPlace } from "./notify.js";
import { sideName } from "./present.js";
import { ApiFailure, call, TOKEN_REFUSED, TOKEN_REVOKED, type ProviderInfo, type Room } from "./api.js";
import type { RoomWatch } from "./roomwatch.js";

/** The console's pages beside the rooms (`ui/pages.tsx`). */
export type Page = "providers" | "tokens" | "audit" | "webhooks";

export abstract class AppCore {
  readonly baseUrl = location.origin;
  token: string | null = null;
  /** Made by App's constructor, with the token. */
  api!: EnsembleClient;
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
  /** The New session form is open in the main pane (operator). */
  newSessionOpen = false;
  /** A page open in the main pane instead of the room (providers, tokens, audit, webhooks). */
  page: Page | null = null;
  selectedRoom: string | null = null;
  selectedSession: string | null = null;
  /** The side conversation shown beside the session, if any. */
  selectedSide: string | null = null;
  messages: { id: number; text: string; error: boolean }[] = [];
  protected watches = new Map<string, RoomWatch>();
  private listeners = new Set<() => void>();
  private scheduled = false;
  private messageId = 0;
  protected roomPoll: ReturnType<typeof setInterval> | undefined;
  /** The interactions (room/session/request) that already took the focus once (see `claimFocus`). */
  private focused = new Set<string>();
  /** Browser notifications of the watched rooms (asked for from the console's prompt). */
  readonly notifier = new Notifier(browserHost(), (place) => this.openPlace(place));

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

  /** The token's role, once known (null: not yet, or the token no longer works). */
  get role(): Role | null {
    if (this.revoked || !this.token) return null;
    return this.me?.role ?? this.helloRole;
  }

  /** Whether the token may do what needs `need` (the server checks again; this only hides what it would refuse). */
  may(need: Role): boolean {
    return allows(this.role, need);
  }

  openPage(page: Page | null): void {
    this.page = page;
    this.changed();
  }

  /** Opens or closes the New session form (shown in the main pane, where it fits without scrolling). */
  openNewSession(open: boolean): void {
    this.newSessionOpen = open;
    this.changed();
  }

  /**
   * Whether the main pane shows the New session form: asked for, or the open room is live and has
   * no session yet (an operator's first step there).
   */
  showsNewSession(): boolean {
    if (!this.may("operator") || !this.selectedRoom) return false;
    if (this.newSessionOpen) return true;
    const room = this.watches.get(this.selectedRoom);
    return room?.state === "live" && room.model.canonical.length === 0;
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

  /** A notification was clicked: its session (and side conversation) is opened (App). */
  abstract openPlace(place: NotifyPlace): void;
}
