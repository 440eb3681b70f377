// What the console knows about a room, built from the room stream alone: the sessions (their last
// snapshot plus what turn and interaction events say since), each session's transcript, pending
// interactions, goal and goal-continuation turns, and the side conversations with their own seq.
// Pure and DOM-free: the UI renders it, the unit tests feed it events.

import type { Schemas } from "../../openapi/clients/typescript/src/client.js";
import { byText } from "./access.js";
import { inputParts, type FileRef, type ImageRef } from "./attach.js";
import { summarise, type QueuedSummary, type QueuedTurn } from "./queue.js";
import { showControls } from "./text.js";

export type Session = Schemas["Session"];
export type Event = Schemas["Event"];
export type Goal = Schemas["Goal"];
export type SessionStatus = Schemas["SessionStatus"];
export type InteractionRequest = Schemas["InteractionRequestedPayload"];
export type InteractionResolution = Schemas["InteractionResolvedPayload"];
export type FileChange = Schemas["FileChange"];
export type PlanStep = Schemas["PlanStep"];
export type Usage = Schemas["UsagePayload"];
export type TurnOrigin = Schemas["TurnOrigin"];
export type HelloFrame = Schemas["HelloFrame"];
export type CommandInfo = Schemas["CommandInfo"];
export type ChangedFile = Schemas["ChangedFile"];
/** The token behind a request (`event.actor`): absent on the agent's own output. */
export type Actor = Schemas["Actor"];

export type Item =
  /** A turn: its text, and the images and files that came with it (`images`, `files`: none for most). */
  | { kind: "turn"; key: string; rev: number; turnId: string; origin: TurnOrigin; text: string; images: ImageRef[]; files: FileRef[]; goalOperationId: string | null; status: "running" | "completed" | "failed" | "canceled"; at: number; actor: Actor | null }
  | { kind: "steer"; key: string; rev: number; text: string; images: ImageRef[]; files: FileRef[] }
  | { kind: "message"; key: string; rev: number; text: string; done: boolean }
  | { kind: "reasoning"; key: string; rev: number; text: string; done: boolean }
  | {
      kind: "call";
      key: string;
      rev: number;
      callId: string;
      name: string;
      callKind: Schemas["CallKind"];
      command: string | null;
      cwd: string | null;
      input: Record<string, unknown> | null;
      output: string;
      status: "running" | Schemas["CallStatus"];
      exitCode: number | null;
      changes: FileChange[];
      /** The key of the interaction that gates this call (an approval asked after the call was announced), if any. */
      gatedBy: string | null;
    }
  | {
      kind: "interaction";
      key: string;
      rev: number;
      request: InteractionRequest;
      resolved: InteractionResolution | null;
      /** The agent's option this console answered with (`optionId`): the resolution names only the decision. */
      picked: string | null;
      /** Who answered (the resolution's `actor`), when a request did. */
      answeredBy: Actor | null;
    }
  | { kind: "plan"; key: string; rev: number; steps: PlanStep[]; explanation: string | null }
  /** `at`: when its latest report came (a turn's usage: the turn's last; the burn rate's end of the turn). */
  | { kind: "usage"; key: string; rev: number; usage: Usage; turnId: string | null; at: number }
  | { kind: "notice"; key: string; rev: number; level: Schemas["NoticeLevel"]; message: string }
  | { kind: "error"; key: string; rev: number; code: string; message: string }
  | { kind: "canceled"; key: string; rev: number; reason: string }
  | { kind: "info"; key: string; rev: number; text: string }
  /** What a turn changed in the workspace (`turn.changes`), between its two checkpoints. */
  | { kind: "changes"; key: string; rev: number; turnId: string; before: string; after: string; files: ChangedFile[]; skipped: string[] }
  /** The workspace was put back to `checkpoint`; restoring `undo` undoes it. */
  | { kind: "restored"; key: string; rev: number; checkpoint: string; undo: string; actor: Actor | null }
  | { kind: "committed"; key: string; rev: number; commit: string; branch: string; message: string; actor: Actor | null };

export type ItemKind = Item["kind"];

/**
 * The key of a message, reasoning, call or interaction: its id within its turn. Providers number
 * their items per process (`msg-1`, `call-1`, …), so after a restart or a resume the same id comes
 * again in a later turn: keyed by id alone, the new item would be folded into the old one.
 */
export function itemKey(kind: "message" | "reasoning" | "call" | "interaction", turnId: string | null | undefined, id: string): string {
  return `${kind}:${turnId ?? "-"}:${id}`;
}

/**
 * One session's transcript: items in the order their content came in, each updated in place as it
 * streams. One exception keeps that order readable: a call announced before the approval that gates
 * it (codex announces a command, then asks whether to run it) moves below that approval while
 * nothing of it has run yet, so the command's output comes after the question that allowed it, as
 * its events did.
 */
export class Transcript {
  readonly items: Item[] = [];
  /** Its session's earlier turns are not loaded: the turns here cannot be numbered from 1. */
  partial = false;
  private readonly byKey = new Map<string, Item>();
  private n = 0;

  get(key: string): Item | undefined {
    return this.byKey.get(key);
  }

  add(item: Item): Item {
    const old = this.byKey.get(item.key);
    if (old) return old;
    this.items.push(item);
    this.byKey.set(item.key, item);
    return item;
  }

  /** Whether the call `item` still waits for the answer to the approval that gates it. */
  awaitingApproval(item: Item): boolean {
    if (item.kind !== "call" || !item.gatedBy || item.status !== "running") return false;
    const gate = this.byKey.get(item.gatedBy);
    return gate?.kind === "interaction" && gate.resolved === null;
  }

  /** Moves `item` to the end (it has had no content of its own yet). */
  private moveToEnd(item: Item): void {
    const i = this.items.indexOf(item);
    if (i < 0 || i === this.items.length - 1) return;
    this.items.splice(i, 1);
    this.items.push(item);
  }

  /** A key unique within this transcript for items that have no id of their own. */
  fresh(prefix: string): string {
    return `${prefix}:${++this.n}`;
  }

  /** Applies one of the session's events. */
  apply(e: Event): void {
    const touch = (item: Item) => {
      item.rev++;
    };
    switch (e.type) {
      case "turn.started": {
        const p = e.payload;
        const { text, images, files } = inputParts(p.input);
        this.add({ kind: "turn", key: `t:${p.turnId}`, rev: 0, turnId: p.turnId, origin: p.origin, text, images, files, goalOperationId: p.goalOperationId ?? null, status: "running", at: e.occurredAtMs, actor: e.actor ?? null });
        return;
      }
      case "turn.steered": {
        const { text, images, files } = inputParts(e.payload.input);
        this.add({ kind: "steer", key: this.fresh("steer"), rev: 0, text, images, files });
        return;
      }
      case "turn.completed":
      case "turn.failed":
      case "turn.canceled": {
        const turn = this.get(`t:${e.payload.turnId}`);
        if (turn?.kind === "turn") {
          turn.status = e.type === "turn.completed" ? "completed" : e.type === "turn.failed" ? "failed" : "canceled";
          touch(turn);
        }
        if (e.type === "turn.failed") this.add({ kind: "error", key: this.fresh("error"), rev: 0, code: e.payload.error.code, message: e.payload.error.message });
        if (e.type === "turn.canceled") this.add({ kind: "canceled", key: this.fresh("canceled"), rev: 0, reason: e.payload.reason });
        return;
      }
      case "message.delta":
      case "reasoning.delta": {
        const kind = e.type === "message.delta" ? "message" : "reasoning";
        const item = this.add({ kind, key: itemKey(kind, e.turnId, e.payload.itemId), rev: 0, text: "", done: false });
        if (item.kind === "message" || item.kind === "reasoning") {
          item.text += e.payload.text;
          touch(item);
        }
        return;
      }
      case "message.completed":
      case "reasoning.completed": {
        const kind = e.type === "message.completed" ? "message" : "reasoning";
        const item = this.add({ kind, key: itemKey(kind, e.turnId, e.payload.itemId), rev: 0, text: "", done: false });
        if (item.kind === "message" || item.kind === "reasoning") {
          item.text = e.payload.text;
          item.done = true;
          touch(item);
        }
        return;
      }
      case "call.started": {
        const p = e.payload;
        this.add({
          kind: "call",
          key: itemKey("call", e.turnId, p.callId),
          rev: 0,
          callId: p.callId,
          name: p.name,
          callKind: p.kind,
          command: p.command ?? null,
          cwd: p.cwd ?? null,
          input: (p.input as Record<string, unknown> | undefined) ?? null,
          output: "",
          status: "running",
          exitCode: null,
          changes: p.changes ?? [],
          gatedBy: null,
        });
        return;
      }
      case "call.updated": {
        const item = this.get(itemKey("call", e.turnId, e.payload.callId));
        if (item?.kind === "call") {
          if (e.payload.outputDelta) item.output += e.payload.outputDelta;
          touch(item);
        }
        return;
      }
      case "call.completed": {
        const p = e.payload;
        let item = this.get(itemKey("call", e.turnId, p.callId));
        if (item?.kind !== "call") {
          item = this.add({ kind: "call", key: itemKey("call", e.turnId, p.callId), rev: 0, callId: p.callId, name: "call", callKind: "other", command: null, cwd: null, input: null, output: "", status: "running", exitCode: null, changes: [], gatedBy: null });
        }
        if (item.kind !== "call") return;
        item.status = p.status;
        item.exitCode = p.exitCode ?? null;
        if (p.output != null) item.output = p.output;
        if (p.changes?.length) item.changes = p.changes;
        touch(item);
        return;
      }
      case "interaction.requested": {
        const key = itemKey("interaction", e.turnId, e.payload.requestId);
        const known = this.get(key);
        this.add({ kind: "interaction", key, rev: 0, request: e.payload, resolved: null, picked: null, answeredBy: null });
        const call = e.payload.callId ? this.get(itemKey("call", e.turnId, e.payload.callId)) : undefined;
        if (!known && call?.kind === "call" && call.status === "running" && !call.output && call.gatedBy === null) {
          // The call waits for this answer: it runs (and shows output) after it, so it reads after it.
          call.gatedBy = key;
          this.moveToEnd(call);
          touch(call);
        }
        return;
      }
      case "interaction.resolved": {
        const item = this.get(itemKey("interaction", e.turnId, e.payload.requestId));
        if (item?.kind === "interaction") {
          item.resolved = e.payload;
          item.answeredBy = e.actor ?? null;
          touch(item);
          const callId = item.request.callId;
          const call = callId ? this.get(itemKey("call", e.turnId, callId)) : undefined;
          if (call?.kind === "call" && call.gatedBy === item.key) touch(call);
        }
        return;
      }
      case "plan.updated": {
        const key = `plan:${e.turnId ?? e.seq}`;
        const item = this.add({ kind: "plan", key, rev: 0, steps: [], explanation: null });
        if (item.kind === "plan") {
          item.steps = e.payload.steps;
          item.explanation = e.payload.explanation ?? null;
          touch(item);
        }
        return;
      }
      case "usage.updated": {
        const key = `usage:${e.turnId ?? e.seq}`;
        const item = this.add({ kind: "usage", key, rev: 0, usage: e.payload, turnId: e.turnId ?? null, at: e.occurredAtMs });
        if (item.kind === "usage") {
          item.usage = e.payload;
          item.at = e.occurredAtMs;
          touch(item);
        }
        return;
      }
      case "notice":
        this.add({ kind: "notice", key: this.fresh("notice"), rev: 0, level: e.payload.level, message: e.payload.message });
        return;
      case "session.started":
        this.info(`Session started (${e.payload.session.provider}${e.payload.session.scope === "side" ? `, side conversation of ${e.payload.session.sourceSessionId ?? "?"}` : ""})`);
        return;
      case "session.updated":
        this.info(sessionUpdateText(e.payload.reason, e.payload.session));
        return;
      case "session.completed":
        this.info(`Session ended${byText(e.actor)} (${e.payload.reason})`);
        return;
      case "session.failed":
        this.add({ kind: "error", key: this.fresh("error"), rev: 0, code: e.payload.error.code, message: e.payload.error.message });
        return;
      case "goal.updated": {
        const g = e.payload.goal;
        this.info(`Goal ${g.status}: ${showControls(g.objective)}`, `goal:${g.operationId}:${g.revision}:${g.status}`);
        return;
      }
      case "goal.cleared":
        this.info("Goal cleared", `goal-cleared:${e.payload.operationId}:${e.payload.revision}`);
        return;
      case "goal.reconcile_required":
        this.add({ kind: "notice", key: this.fresh("notice"), rev: 0, level: "warning", message: `The goal needs reconciling (${e.payload.reason}): a turn the agent started could not be credited to a goal operation.` });
        return;
      case "commands.updated":
      case "queue.updated":
        return;
      case "turn.changes": {
        const p = e.payload;
        this.add({ kind: "changes", key: `changes:${p.turnId}`, rev: 0, turnId: p.turnId, before: p.before, after: p.after, files: p.files, skipped: p.skipped ?? [] });
        return;
      }
      case "workspace.restored":
        this.add({ kind: "restored", key: `restored:${e.eventId}`, rev: 0, checkpoint: e.payload.checkpoint, undo: e.payload.undo, actor: e.actor ?? null });
        return;
      case "workspace.committed":
        this.add({ kind: "committed", key: `committed:${e.eventId}`, rev: 0, commit: e.payload.commit, branch: e.payload.branch, message: e.payload.message, actor: e.actor ?? null });
        return;
    }
  }

  /** The session's turns, oldest first (1-based numbers for people: "turn 2"). */
  /**
   * The items through the end of turn `turnId` (what a fork through that turn inherited): every
   * item before the next turn's; empty when the turn is not here (its events were pruned).
   */
  through(turnId: string): Item[] {
    const at = this.items.findIndex((i) => i.kind === "turn" && i.turnId === turnId);
    if (at < 0) return [];
    const next = this.items.findIndex((i, n) => n > at && i.kind === "turn");
    return this.items.slice(0, next < 0 ? this.items.length : next);
  }

  turnNumber(turnId: string): number | null {
    if (this.partial) return null;
    let n = 0;
    for (const item of this.items) {
      if (item.kind !== "turn") continue;
      n++;
      if (item.turnId === turnId) return n;
    }
    return null;
  }

  info(text: string, key?: string): void {
    this.add({ kind: "info", key: key ?? this.fresh("info"), rev: 0, text });
  }
}

function sessionUpdateText(reason: string, s: Session): string {
  switch (reason) {
    case "config": {
      const opts = (s.configOptions ?? []).map((o) => `${o.name}: ${o.choices.find((c) => c.value === o.current)?.name ?? o.current}`);
      const mode = s.modes ? [`mode: ${s.modes.available.find((m) => m.id === s.modes?.current)?.name ?? s.modes.current}`] : [];
      // The agent's names for its modes and options: shown with their controls.
      return showControls(`Settings changed (${[...mode, ...opts].join(", ")})`);
    }
    case "resumed":
      return "Session resumed";
    case "released":
      return "Session released (its agent process stopped; it resumes on the next turn)";
    case "disconnected":
      return "Session disconnected";
    case "provider_exited":
      return `The agent process exited${s.lastError ? `: ${s.lastError}` : ""}`;
    case "server_restart":
      return "The server restarted: the session is disconnected until it resumes";
    case "server_shutdown":
      return "The server shut down: the session is disconnected until it resumes";
    case "resume_failed":
      return `Resuming failed${s.lastError ? `: ${s.lastError}` : ""}`;
    default:
      return `Session updated (${reason})`;
  }
}

export type SessionPresent = Schemas["SessionPresent"];

/**
 * How much of a canonical session's log the console holds (the open room's sessions): `none`
 * until it is drawn; `loading` while its present and its latest turns are read (live events are
 * kept meanwhile); `ready` once its transcript is the loaded events, live ones appended.
 */
export type LogState = "none" | "loading" | "ready";

/** What the console tracks per session, besides its transcript. */
export class SessionState {
  session: Session;
  activeTurnId: string | null;
  /** The hello said `waiting` and no interaction event has been seen since (live-only rooms). */
  private snapshotWaiting: boolean;
  readonly pending = new Map<string, InteractionRequest>();
  transcript = new Transcript();
  /** The loaded part of a canonical session's log, oldest first (see `LogState`). */
  log: Event[] = [];
  logState: LogState = "none";
  /** The `before` of the next older page of the session's events (null: nothing older is kept). */
  olderBefore: number | null = null;
  /** An older page is being read. */
  loadingOlder = false;
  goal: Goal | null = null;
  /** Who closed the session (its `session.completed` event's actor), when a request did. */
  closedBy: Actor | null = null;
  /** Turns the provider started for a goal (`turn.started.origin`), oldest first. */
  readonly autoTurns: { turnId: string; origin: TurnOrigin; goalOperationId: string | null }[] = [];
  commands: CommandInfo[] = [];
  /** The session's queue of follow-ups, first to start first (its latest `queue.updated`, or `GET …/queue`). */
  queue: QueuedSummary[] = [];
  /** How many `queue.updated` events were applied: a `GET …/queue` answer older than one is dropped. */
  queueRev = 0;
  /** Side conversations only: the last side seq applied and events that arrived ahead of a gap. */
  sideSeq = 0;
  readonly sideAhead = new Map<number, Event>();
  rev = 0;

  constructor(session: Session) {
    this.session = session;
    this.activeTurnId = session.activeTurnId ?? null;
    this.snapshotWaiting = session.status === "waiting";
  }

  get id(): string {
    return this.session.sessionId;
  }

  get isSide(): boolean {
    return this.session.scope === "side";
  }

  /** The status to show: the snapshot's, refined by the turn and interaction events since. */
  get status(): SessionStatus {
    const s = this.session.status;
    if (s === "completed" || s === "failed" || s === "disconnected" || s === "starting") return s;
    if (this.pending.size || this.snapshotWaiting) return "waiting";
    if (this.activeTurnId) return "working";
    return "ready";
  }

  /** A newer snapshot of the session (an older one, e.g. replayed after a hello, is ignored). */
  snapshot(session: Session): void {
    if (session.updatedAtMs < this.session.updatedAtMs) return;
    this.session = session;
    this.activeTurnId = session.activeTurnId ?? null;
    this.snapshotWaiting = session.status === "waiting" && this.pending.size === 0;
    this.rev++;
  }

  /**
   * The queue as `GET …/queue` read it, asked when `queueRev` was `rev`: taken only when no
   * `queue.updated` came meanwhile (that event is newer than the answer).
   */
  queueFromRest(queue: QueuedTurn[], rev: number): boolean {
    if (this.queueRev !== rev) return false;
    this.queue = queue.map(summarise);
    this.rev++;
    return true;
  }

  /**
   * The session as `GET …/present` read it (the loaded log's events after its `headSeq`, which
   * came live while it was asked, are applied again over it: they are newer).
   */
  fromPresent(p: SessionPresent): void {
    this.snapshot(p.session);
    this.pending.clear();
    for (const i of p.pending) this.pending.set(i.requestId, i);
    this.snapshotWaiting = false;
    this.goal = p.goal ?? null;
    this.commands = p.commands;
    this.queue = p.queue.map(summarise);
    for (const e of this.log) if (e.seq > p.headSeq) this.apply(e, false);
    this.rev++;
  }

  /** A live event of a canonical session of the open room: kept in its log, drawn once it is loaded. */
  onLive(e: Event): void {
    if (this.logState === "none") return;
    const last = this.log[this.log.length - 1];
    if (last && e.seq <= last.seq) return;
    this.log.push(e);
    if (this.logState === "ready") this.transcript.apply(e);
  }

  /**
   * A page of the session's events read backwards (its tail, or older turns): merged into the
   * log by seq (none twice), and the transcript drawn again from it. `prev`: the page's `prev`
   * (more is older). While older events are not loaded, the transcript starts at the log's first
   * turn, so no turn is shown cut.
   */
  addPage(events: Event[], prev: number | null): void {
    const bySeq = new Map<number, Event>();
    for (const e of [...events, ...this.log]) bySeq.set(e.seq, e);
    this.log = [...bySeq.values()].sort((a, b) => a.seq - b.seq);
    this.olderBefore = prev;
    this.logState = "ready";
    this.redraw();
  }

  /** The log is to be read again (the server's history moved on while this client was away). */
  resetLog(): void {
    this.log = [];
    this.logState = "none";
    this.olderBefore = null;
    this.transcript = new Transcript();
    this.rev++;
  }

  /** Whether events of this session before the loaded ones are gone from the server. */
  get startPruned(): boolean {
    return this.logState === "ready" && this.olderBefore === null && this.log.length > 0 && this.log[0]!.type !== "session.started";
  }

  private redraw(): void {
    const from = this.olderBefore === null ? 0 : Math.max(0, this.log.findIndex((e) => e.type === "turn.started"));
    const t = new Transcript();
    t.partial = this.olderBefore !== null;
    this.autoTurns.length = 0;
    for (const e of this.log.slice(from)) {
      t.apply(e);
      if (e.type === "turn.started" && e.payload.origin !== "user") {
        this.autoTurns.push({ turnId: e.payload.turnId, origin: e.payload.origin, goalOperationId: e.payload.goalOperationId ?? null });
      }
      if (e.type === "session.completed") this.closedBy = e.actor ?? null;
    }
    this.transcript = t;
    this.rev++;
  }

  /** A side conversation that ended while this client did not see its `session.completed`. */
  end(): void {
    this.session = { ...this.session, status: "completed", live: false };
    this.pending.clear();
    this.activeTurnId = null;
    this.rev++;
  }

  apply(e: Event, withTranscript: boolean): void {
    this.rev++;
    switch (e.type) {
      case "session.started":
      case "session.updated":
      case "session.completed":
      case "session.failed":
        this.snapshot(e.payload.session);
        if (e.type === "session.completed" || e.type === "session.failed") {
          this.pending.clear();
          this.activeTurnId = null;
        }
        if (e.type === "session.completed") this.closedBy = e.actor ?? null;
        break;
      case "turn.started":
        this.activeTurnId = e.payload.turnId;
        if (e.payload.origin !== "user" && !this.autoTurns.some((t) => t.turnId === e.payload.turnId)) {
          this.autoTurns.push({ turnId: e.payload.turnId, origin: e.payload.origin, goalOperationId: e.payload.goalOperationId ?? null });
        }
        break;
      case "turn.completed":
      case "turn.failed":
      case "turn.canceled":
        if (this.activeTurnId === e.payload.turnId || this.activeTurnId === null) this.activeTurnId = null;
        this.snapshotWaiting = false;
        break;
      case "interaction.requested":
        this.pending.set(e.payload.requestId, e.payload);
        this.snapshotWaiting = false;
        break;
      case "interaction.resolved":
        this.pending.delete(e.payload.requestId);
        this.snapshotWaiting = false;
        break;
      case "goal.updated":
        this.goal = e.payload.goal;
        break;
      case "goal.cleared":
        this.goal = null;
        break;
      case "commands.updated":
        this.commands = e.payload.commands;
        break;
      case "queue.updated":
        this.queue = e.payload.queue;
        this.queueRev++;
        break;
      default:
        break;
    }
    if (withTranscript) this.transcript.apply(e);
  }
}

/**
 * A room as one stream shows it. `full` rooms keep transcripts (the open room: live from its head,
 * each session's latest turns read over REST when it is drawn, older ones as the transcript is
 * scrolled up); the others only their sessions, for the room list's counts and badges.
 */
export class RoomModel {
  readonly sessions = new Map<string, SessionState>();
  lastSeq = 0;
  headSeq = 0;
  truncated = false;
  /** The role of the token this room's stream was opened with (its latest `hello`'s). */
  role: HelloFrame["role"] | null = null;
  rev = 0;

  constructor(
    readonly roomId: string,
    readonly full: boolean,
  ) {}

  /** Canonical sessions, oldest first. */
  get canonical(): SessionState[] {
    return [...this.sessions.values()].filter((s) => !s.isSide);
  }

  /** Open side conversations of `sourceId`. */
  sidesOf(sourceId: string): SessionState[] {
    return [...this.sessions.values()].filter((s) => s.isSide && s.session.sourceSessionId === sourceId && s.status !== "completed");
  }

  session(id: string): SessionState | undefined {
    return this.sessions.get(id);
  }

  private ensure(session: Session): SessionState {
    let st = this.sessions.get(session.sessionId);
    if (!st) {
      st = new SessionState(session);
      this.sessions.set(session.sessionId, st);
    }
    return st;
  }

  /**
   * A `hello` (first frame of every connection): the sessions as they are now. Older snapshots
   * that a replay brings afterwards are ignored (see `SessionState.snapshot`); sides it does not
   * list have ended (side events are not in the room log, so only a hello or a side event says so).
   */
  onHello(h: HelloFrame): void {
    this.rev++;
    this.headSeq = Math.max(this.headSeq, h.headSeq);
    this.truncated = h.sessionsTruncated;
    this.role = h.role ?? null;
    for (const s of [...h.sessions, ...h.sides]) this.ensure(s).snapshot(s);
    if (h.sessionsTruncated) return;
    const open = new Set(h.sides.map((s) => s.sessionId));
    for (const st of this.sessions.values()) {
      if (st.isSide && !open.has(st.id) && st.status !== "completed") st.end();
    }
  }

  /**
   * A durable room event (the stream yields each once, in order). A session that starts while the
   * room is watched has its whole log live: it needs no reading.
   */
  onEvent(e: Event): void {
    this.rev++;
    this.lastSeq = e.seq;
    this.headSeq = Math.max(this.headSeq, e.seq);
    const snap = "session" in e.payload ? (e.payload as { session?: Session }).session : undefined;
    const fresh = e.type === "session.started" && !this.sessions.has(e.sessionId);
    const st = snap && snap.sessionId === e.sessionId ? this.ensure(snap) : this.sessions.get(e.sessionId);
    if (!st) return;
    if (fresh && this.full) st.logState = "ready";
    st.apply(e, false);
    if (this.full) st.onLive(e);
  }

  /**
   * A side conversation's event (its own seq, 1, 2, 3, …). Applied in seq order exactly once:
   * repeats are dropped and events after a gap wait. Returns whether a gap is open (the caller
   * then fetches `…/sessions/{sideId}/events?after=` the side's seq).
   */
  onSideEvent(e: Event): boolean {
    this.rev++;
    const snap = "session" in e.payload ? (e.payload as { session?: Session }).session : undefined;
    let st = this.sessions.get(e.sessionId);
    if (!st && snap && snap.sessionId === e.sessionId) st = this.ensure(snap);
    if (!st) return e.seq > 1;
    if (e.seq <= st.sideSeq) return false;
    st.sideAhead.set(e.seq, e);
    for (let next = st.sideAhead.get(st.sideSeq + 1); next; next = st.sideAhead.get(st.sideSeq + 1)) {
      st.sideAhead.delete(next.seq);
      st.sideSeq = next.seq;
      st.apply(next, this.full);
    }
    return st.sideAhead.size > 0;
  }

  /** Snapshots read over REST (`GET …/sessions`, `…/sides`). */
  onSnapshots(sessions: Session[]): void {
    this.rev++;
    for (const s of sessions) {
      const st = this.sessions.get(s.sessionId);
      if (st) st.snapshot(s);
      else this.ensure(s);
    }
  }
}

/**
 * How a status reads to a person: a session waiting on an answer waits for "you" only when this
 * token may answer (an approver's or admin's); otherwise for an approver.
 */
export function statusLabel(s: SessionStatus, canAnswer = true): string {
  switch (s) {
    case "waiting":
      return canAnswer ? "waiting for you" : "waiting for an approver";
    case "completed":
      return "closed";
    default:
      return s;
  }
}
