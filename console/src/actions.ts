// The console's REST actions on top of AppCore (core.ts): starting a session, sending turns, the
// session's controls (cancel, resume, release, close, settings, answers, side conversations), its
// usage and budgets, the queue of follow-ups, the workspace, the goal, and the server's tokens.
// What some of them open or select afterwards (a room, a session, a side) is App's (app.ts).

import type { Schemas } from "../../openapi/clients/typescript/src/client.js";
import type { Event, RoomModel, Session } from "./model.js";
import { aboutAttachments, attachmentErrorText, type InputItem } from "./attach.js";
import type { QueuedTurn, SubmitHow } from "./queue.js";
import { Latest, refreshesUsage, type Budget, type RoomUsage, type SessionUsage } from "./usage.js";
import { call, failure, randomId } from "./api.js";
import { AppCore } from "./core.js";

export abstract class Actions extends AppCore {
  /** What each session spent and its budget (`GET …/usage`), by room and session, kept current from the open room's events. */
  private usageFeeds = new Map<string, Latest<SessionUsage>>();
  /** What each room spent and its budget (`GET /v1/rooms/{roomId}/usage`). */
  private roomUsageFeeds = new Map<string, Latest<RoomUsage>>();

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

  /**
   * Closes a session; with `purge`, its worktree goes too (and its branch when merged). Purging a
   * closed session removes a worktree it left behind. Whether it worked.
   */
  async close(sessionId: string, purge = false): Promise<boolean> {
    const done = await this.act(purge ? "removing the worktree" : "closing", async () => {
      const query = purge ? { purge: true } : {};
      const r = await this.api.DELETE("/v1/rooms/{roomId}/sessions/{sessionId}", { params: { ...this.path(sessionId), query } });
      if (r.error !== undefined || !r.response.ok) throw failure(r.error, r.response);
      return true;
    });
    if (this.selectedSide === sessionId) this.selectSide(null);
    this.changed();
    return done === true;
  }

  /** The worktrees the room's closed sessions left on disk (none when they cannot be read). */
  async leftWorktrees(roomId: string): Promise<Schemas["LeftWorktree"][]> {
    const list = await this.act("listing the worktrees left behind", () => call(this.api.GET("/v1/rooms/{roomId}/worktrees", { params: { path: { roomId } } })));
    return list?.data ?? [];
  }

  /**
   * Downloads the room's export (its log, one JSON object a line) as a file: read with the token
   * (a link could not carry it), then handed to the browser as a download.
   */
  async exportRoom(roomId: string): Promise<void> {
    await this.act("exporting the room", async () => {
      const res = await fetch(`${this.baseUrl}/v1/rooms/${encodeURIComponent(roomId)}/export`, { headers: { authorization: `Bearer ${this.token ?? ""}` } });
      if (!res.ok) throw new Error(`${res.status} ${res.statusText}`);
      const url = URL.createObjectURL(await res.blob());
      const a = document.createElement("a");
      a.href = url;
      a.download = `${roomId}.ndjson`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    });
  }

  /** Renames a session (its title). Whether it worked. */
  async rename(sessionId: string, title: string): Promise<boolean> {
    const done = await this.act("renaming", () => call(this.api.PATCH("/v1/rooms/{roomId}/sessions/{sessionId}", { params: this.path(sessionId), body: { title } })));
    return done !== undefined;
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

  clearGoal(sessionId: string) {
    return this.act("clearing the goal", async () => {
      const r = await this.api.DELETE("/v1/rooms/{roomId}/sessions/{sessionId}/goal", { params: { ...this.path(sessionId), query: { clientSubmitId: randomId("goal") } } });
      if (r.error !== undefined || !r.response.ok) throw failure(r.error, r.response);
    });
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

  // ---- the selection (App) ----

  abstract openRoom(roomId: string, sessionId?: string | null, sideId?: string | null): void;
  abstract selectSession(sessionId: string | null): void;
  abstract selectSide(sideId: string | null): void;
  abstract roomCount(roomId: string, sessions: number): void;
}
