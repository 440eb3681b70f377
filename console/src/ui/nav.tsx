// The nav column: the rooms (with their session counts and badges, and a box to open or create one)
// and the open room's sessions (open ones, then the closed), with Share and + New session.

import { useEffect, useState } from "preact/hooks";
import type { App } from "../app.js";
import type { SessionState } from "../model.js";
import type { Schemas } from "../../../openapi/clients/typescript/src/client.js";
import { ShareButton } from "./share.js";
import { Badge, displayName } from "./sessionlabel.js";
import { roomIdProblem } from "../roomwatch.js";
import { formatBytes } from "../attach.js";

export function RoomList({ app, onPick }: { app: App; onPick: () => void }) {
  const [name, setName] = useState("");
  const typed = name.trim();
  const problem = typed ? roomIdProblem(typed) : null;
  const rooms = [...app.rooms.values()].sort((a, b) => a.roomId.localeCompare(b.roomId));
  return (
    <section class="panel">
      <h2>Rooms</h2>
      <ul class="list" data-testid="room-list">
        {rooms.map((r) => {
          const model = app.room(r.roomId);
          const waiting = model ? model.canonical.filter((s) => s.status === "waiting").length : 0;
          const working = model ? model.canonical.filter((s) => s.status === "working").length : 0;
          // Open sessions where the room's model is known (closed ones are counted apart); else the
          // server's count of every session.
          const known = model !== undefined && app.watch(r.roomId)?.state !== "connecting";
          const count = known ? model.canonical.filter((s) => s.status !== "completed").length : r.sessionCount;
          const closedCount = known ? model.canonical.length - count : 0;
          return (
            <li key={r.roomId}>
              <button
                type="button"
                class={`item${r.roomId === app.selectedRoom ? " on" : ""}`}
                aria-current={r.roomId === app.selectedRoom ? "true" : undefined}
                data-testid="room-item"
                data-room={r.roomId}
                data-count={count}
                onClick={() => {
                  app.openRoom(r.roomId);
                  onPick();
                }}
              >
                <span class="name">{r.roomId}</span>
                <span class="dim count" data-closed={closedCount}>
                  {known ? `${count} open${closedCount ? ` · ${closedCount} closed` : ""}` : `${count} session${count === 1 ? "" : "s"}`}
                </span>
                {waiting ? <span class="badge waiting">{waiting} waiting</span> : working ? <span class="badge working">{working} working</span> : null}
              </button>
            </li>
          );
        })}
        {!rooms.length ? <li class="dim">No rooms yet.</li> : null}
      </ul>
      <form
        class="row"
        onSubmit={(ev) => {
          ev.preventDefault();
          if (typed && !problem) {
            app.openRoom(typed);
            setName("");
            onPick();
          }
        }}
      >
        <input
          aria-label="Room id to open or create"
          placeholder="room id"
          value={name}
          onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)}
          data-testid="room-input"
          aria-invalid={problem ? "true" : undefined}
          aria-describedby={problem ? "room-input-problem" : undefined}
        />
        <button type="submit" data-testid="open-room" disabled={!typed || problem !== null}>
          Open
        </button>
      </form>
      {problem ? (
        <p class="field-problem" id="room-input-problem" data-testid="room-input-problem">
          {problem}
        </p>
      ) : null}
    </section>
  );
}

export function SessionList({ app, onPick }: { app: App; onPick: () => void }) {
  const room = app.room();
  const all = room?.canonical ?? [];
  const open = all.filter((s) => s.status !== "completed");
  const closed = all.filter((s) => s.status === "completed");
  const mayStart = app.may("operator");
  const showForm = app.showsNewSession();
  const entry = (s: SessionState) => (
    <li key={s.id}>
      <button
        type="button"
        class={`item session${s.id === app.selectedSession ? " on" : ""}`}
        aria-current={s.id === app.selectedSession ? "true" : undefined}
        data-testid="session-item"
        data-session={s.id}
        data-status={s.status}
        onClick={() => {
          app.selectSession(s.id);
          onPick();
        }}
      >
        <span class="name">{displayName(s)}</span>
        <Badge status={s.status} canAnswer={app.may("approver")} />
        <span class="dim meta">
          {s.id} · {s.session.provider}
          {room && room.sidesOf(s.id).length ? ` · ${room.sidesOf(s.id).length} side` : ""}
        </span>
      </button>
    </li>
  );
  return (
    <section class="panel">
      <div class="row spread">
        <h2>Sessions</h2>
        <span class="row">
          {app.may("admin") && app.selectedRoom ? <ShareButton app={app} /> : null}
          {app.selectedRoom ? (
            <button type="button" data-testid="export-room" title="Download the room's log (one JSON object a line)" onClick={() => void app.exportRoom(app.selectedRoom ?? "")}>
              Export
            </button>
          ) : null}
          {mayStart ? (
            <button
              type="button"
              data-testid="new-session"
              aria-expanded={showForm}
              aria-controls="main"
              onClick={() => {
                // Opens (the form's Cancel closes it): a second click before the next render keeps it open.
                app.openNewSession(true);
                onPick();
              }}
            >
              + New session
            </button>
          ) : null}
        </span>
      </div>
      <ul class="list" data-testid="session-list">
        {open.map(entry)}
        {!all.length ? <li class="dim">No sessions.</li> : null}
      </ul>
      {closed.length ? (
        <details class="closed-sessions">
          <summary>Closed ({closed.length})</summary>
          <ul class="list">{closed.map(entry)}</ul>
        </details>
      ) : null}
      <LeftBehind app={app} closed={closed.filter((s) => s.session.workspace?.kind === "worktree")} />
    </section>
  );
}

/**
 * The worktrees closed sessions left on disk (closed without removing them), each with what it
 * takes and a way to remove it (an operator's). Read again when the room's closed sessions change.
 */
function LeftBehind({ app, closed }: { app: App; closed: SessionState[] }) {
  const roomId = app.selectedRoom;
  const [found, setFound] = useState<Schemas["LeftWorktree"][]>([]);
  const [busy, setBusy] = useState<string | null>(null);
  const [round, setRound] = useState(0);
  const ids = closed.map((s) => s.id).join(",");
  useEffect(() => {
    let live = true;
    if (!roomId || !ids) {
      setFound([]);
      return;
    }
    void app.leftWorktrees(roomId).then((list) => {
      if (live) setFound(list);
    });
    return () => {
      live = false;
    };
  }, [roomId, ids, round]);
  if (!found.length) return null;
  const room = app.room();
  return (
    <details class="left-behind" data-testid="left-behind" open>
      <summary>Worktrees left behind ({found.length})</summary>
      <ul class="list">
        {found.map((w) => {
          const st = room?.session(w.sessionId);
          const path = w.workspace.path ?? "";
          return (
            <li key={w.sessionId} class="row spread" data-testid="left-behind-item" data-session={w.sessionId}>
              <span class="dim" title={path}>
                {st ? displayName(st) : w.sessionId} · {formatBytes(w.diskBytes)}
              </span>
              {app.may("operator") ? (
                <button
                  type="button"
                  class="danger"
                  data-testid="remove-worktree"
                  disabled={busy === w.sessionId}
                  title={`Delete ${path} and its checkpoints (its branch too when merged)`}
                  onClick={async () => {
                    setBusy(w.sessionId);
                    await app.close(w.sessionId, true);
                    setBusy(null);
                    setRound((r) => r + 1);
                  }}
                >
                  Remove
                </button>
              ) : null}
            </li>
          );
        })}
      </ul>
    </details>
  );
}
