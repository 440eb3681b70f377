// The nav column: the rooms (with their session counts and badges, and a box to open or create one)
// and the open room's sessions (open ones, then the closed), with Share and + New session.

import { useState } from "preact/hooks";
import type { App } from "../app.js";
import type { SessionState } from "../model.js";
import { ShareButton } from "./share.js";
import { Badge, displayName } from "./sessionlabel.js";
import { roomIdProblem } from "../roomwatch.js";

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
          const count = model && app.watch(r.roomId)?.state !== "connecting" ? model.canonical.length : r.sessionCount;
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
                <span class="dim count">
                  {count} session{count === 1 ? "" : "s"}
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
        <Badge status={s.status} />
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
          {mayStart ? (
            <button
              type="button"
              data-testid="new-session"
              aria-expanded={showForm}
              aria-controls="main"
              onClick={() => {
                app.openNewSession(!showForm);
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
    </section>
  );
}
