// The console's screens: header (connection, token), rooms and sessions (nav), the open session
// (settings, transcript, composer) and beside it the goal panel and the open side conversation.

import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import type { App, ProviderInfo } from "../app.js";
import { statusLabel, type SessionState, type SessionStatus } from "../model.js";
import { modelText, showControls, shown } from "../shown.js";
import { sideName } from "../present.js";
import { forkText, hasCheckpoints, workspaceText } from "../changes.js";
import { TranscriptItems, type ItemContext } from "./items.js";
import { CommitDialog, FilesPanel, SessionChangesPanel } from "./workspace.js";
import { ShareButton, ShareDialog } from "./share.js";
import { byText, whoText } from "../access.js";
import { IMAGE_ACCEPT, imageName, isImageType, refuseImage, toBase64, turnInput, type OutgoingImage } from "../attach.js";
import { PendingImages, type PendingImage } from "./attachments.js";
import { QueuePanel } from "./queue.js";
import { RoomUsagePanel, SessionUsageLine } from "./usage.js";
import { composerKey, primaryAction, type SubmitHow } from "../queue.js";
import { titleWith, waitingSessions } from "../notify.js";
import type { Schemas } from "../../../openapi/clients/typescript/src/client.js";

/** The page's own title (index.html's), before any count. */
const BASE_TITLE = typeof document !== "undefined" ? document.title : "Ensemble console";

export function Root({ app }: { app: App }) {
  const [, setTick] = useState(0);
  useEffect(() => {
    const off = app.subscribe(() => setTick((t) => t + 1));
    // What changed between the first render and this subscription (e.g. no token) is shown now.
    setTick((t) => t + 1);
    return off;
  }, [app]);
  const [navOpen, setNavOpen] = useState(false);
  // The tab's title counts the sessions waiting on an answer in every watched room: "(2) Ensemble console".
  const waiting = waitingSessions(app.watchedRooms());
  useEffect(() => {
    document.title = titleWith(BASE_TITLE, waiting);
  }, [waiting]);
  const room = app.room();
  const session = app.selectedSession ? room?.session(app.selectedSession) : undefined;
  const side = app.selectedSide ? room?.session(app.selectedSide) : undefined;
  return (
    <div class={`layout${navOpen ? " nav-open" : ""}`}>
      <header class="top">
        <button type="button" class="nav-toggle" aria-expanded={navOpen} aria-controls="nav" onClick={() => setNavOpen(!navOpen)}>
          ☰ <span class="sr-only">Rooms and sessions</span>
        </button>
        <h1>Ensemble</h1>
        {app.selectedRoom ? (
          <span class="crumb">
            {app.selectedRoom}
            {session ? ` / ${displayName(session)}` : ""}
          </span>
        ) : null}
        <Connection app={app} />
        <WhoAmI app={app} />
        <TokenBox app={app} />
      </header>
      <Messages app={app} />
      <nav id="nav" class="nav" aria-label="Rooms and sessions">
        <RoomList app={app} onPick={() => setNavOpen(false)} />
        {app.selectedRoom ? <SessionList app={app} onPick={() => setNavOpen(false)} /> : null}
        {app.selectedRoom ? <RoomUsagePanel app={app} roomId={app.selectedRoom} /> : null}
      </nav>
      <main class="main" id="main">
        {!app.token ? (
          <p class="empty">Paste the token above to start.</p>
        ) : !app.selectedRoom ? (
          <p class="empty">Open a room on the left (or type a new room id) to see its sessions.</p>
        ) : !session ? (
          <p class="empty">{room && room.canonical.length ? "Pick a session on the left." : "No session in this room yet: start one on the left."}</p>
        ) : (
          <SessionView app={app} st={session} key={session.id} />
        )}
      </main>
      <aside class="aside" aria-label="Goal and side conversation">
        {session && !session.isSide ? <GoalPanel app={app} st={session} key={`goal-${session.id}`} /> : null}
        {session && side && side.session.sourceSessionId === session.id ? <SidePanel app={app} st={side} key={side.id} /> : null}
      </aside>
      {app.shareOpen && app.selectedRoom && app.may("admin") ? <ShareDialog app={app} room={app.selectedRoom} key={app.selectedRoom} /> : null}
    </div>
  );
}

/** A session's title, or its id while it has the default title (a side conversation's: `sideName`). */
function displayName(st: SessionState): string {
  const t = st.session.title.trim();
  return showControls(t && t !== "New session" ? t : st.id);
}

/** The token's role and name ("viewer · shared device"): what this page may do. */
function WhoAmI({ app }: { app: App }) {
  if (!app.token) return null;
  if (app.revoked) {
    return (
      <span class="whoami revoked" data-testid="whoami" data-role="none">
        token revoked
      </span>
    );
  }
  const role = app.role;
  const text = whoText(role, app.me?.name ?? null);
  if (!text) return null;
  return (
    <span class={`whoami role-${role ?? "unknown"}`} data-testid="whoami" data-role={role ?? undefined} title={app.me ? `token ${app.me.tokenId}; ${app.me.rooms.includes("*") ? "every room" : `rooms: ${app.me.rooms.join(", ")}`}` : undefined}>
      <span class="sr-only">Signed in as </span>
      {text}
    </span>
  );
}

function Connection({ app }: { app: App }) {
  const w = app.selectedRoom ? app.watch(app.selectedRoom) : undefined;
  const state = w?.state ?? "idle";
  const text =
    state === "live"
      ? "live"
      : state === "connecting"
        ? "connecting…"
        : state === "reconnecting"
          ? "reconnecting…"
          : state === "offline"
            ? "offline, retrying"
            : state === "revoked"
              ? "stopped: token revoked or expired"
              : "no room open";
  return (
    <span class={`conn conn-${state}`} data-testid="connection-status" data-state={state} role="status" title={w?.error ?? undefined}>
      <span class="dot" aria-hidden="true" />
      {text}
      {state === "offline" ? (
        <button type="button" class="link" onClick={() => w?.retryNow()}>
          retry now
        </button>
      ) : null}
    </span>
  );
}

function TokenBox({ app }: { app: App }) {
  const [value, setValue] = useState("");
  if (!app.tokenProblem) {
    return (
      <button type="button" class="link token-forget" onClick={() => app.forgetToken()}>
        Forget token
      </button>
    );
  }
  return (
    <form
      class="token-box"
      onSubmit={(ev) => {
        ev.preventDefault();
        if (value.trim()) app.useToken(value.trim());
        setValue("");
      }}
    >
      <span class="warn" data-testid="token-problem" role="alert">
        {app.tokenProblem}
      </span>
      <input type="password" autoComplete="off" aria-label="Bearer token" placeholder="bearer token" data-testid="token-input" value={value} onInput={(e) => setValue((e.currentTarget as HTMLInputElement).value)} />
      <button type="submit" data-testid="use-token">
        Use token
      </button>
    </form>
  );
}

function Messages({ app }: { app: App }) {
  return (
    <div class="messages">
      {app.token && !app.tokenProblem && app.notifier.prompt ? <NotifyPrompt app={app} /> : null}
      <div role="status" aria-live="polite">
        {app.messages.map((m) => (
          <div class={`message-bar${m.error ? " err" : ""}`} data-testid="app-message" key={m.id}>
            <span>{m.text}</span>
            <button type="button" class="link" aria-label="Dismiss" onClick={() => app.dismiss(m.id)}>
              ×
            </button>
          </div>
        ))}
      </div>
    </div>
  );
}

/**
 * Offers browser notifications once: the browser is asked only from this button's click (never
 * unprompted); "Not now" hides it for good in this browser.
 */
function NotifyPrompt({ app }: { app: App }) {
  return (
    <div class="message-bar notify-prompt" data-testid="notify-prompt" role="region" aria-label="Browser notifications">
      <span>Get notified when a session needs an answer or a turn ends while this tab is in the background?</span>
      <span class="row">
        <button type="button" class="primary" data-testid="notify-enable" onClick={() => void app.enableNotifications()}>
          Turn on notifications
        </button>
        <button type="button" data-testid="notify-dismiss" aria-label="Not now: do not offer notifications again" onClick={() => app.dismissNotifications()}>
          Not now
        </button>
      </span>
    </div>
  );
}

function RoomList({ app, onPick }: { app: App; onPick: () => void }) {
  const [name, setName] = useState("");
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
          if (name.trim()) {
            app.openRoom(name.trim());
            setName("");
            onPick();
          }
        }}
      >
        <input aria-label="Room id to open or create" placeholder="room id" value={name} onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)} data-testid="room-input" />
        <button type="submit" data-testid="open-room">
          Open
        </button>
      </form>
    </section>
  );
}

function Badge({ status }: { status: SessionStatus }) {
  return (
    <span class={`badge ${status}`} data-testid="status-badge" data-status={status}>
      {statusLabel(status)}
    </span>
  );
}

function SessionList({ app, onPick }: { app: App; onPick: () => void }) {
  const room = app.room();
  const [formOpen, setFormOpen] = useState(false);
  const all = room?.canonical ?? [];
  const open = all.filter((s) => s.status !== "completed");
  const closed = all.filter((s) => s.status === "completed");
  const mayStart = app.may("operator");
  const showForm = mayStart && (formOpen || (room !== undefined && app.watch(room.roomId)?.state === "live" && all.length === 0));
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
            <button type="button" data-testid="new-session" aria-expanded={showForm} onClick={() => setFormOpen(!showForm)}>
              + New session
            </button>
          ) : null}
        </span>
      </div>
      {showForm ? <NewSession app={app} onDone={() => setFormOpen(false)} /> : null}
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

/// What a session's box is, in a line: its network and limits, or that it has none.
function isolationText(i: Schemas["Isolation"]): string {
  if (i.mode === "off") return "isolation off: the agent can read and do whatever the server's user can";
  const net = i.network === "all" ? "any host" : (i.network ?? []).length ? (i.network as string[]).join(", ") : "no network";
  const limits = [i.memoryMb != null ? `${i.memoryMb} MiB` : "", i.maxProcesses != null ? `${i.maxProcesses} processes` : ""].filter(Boolean).join(", ");
  const enforced = i.limits === "unenforced" ? " (not enforced here)" : "";
  return `isolated · network: ${showControls(net)}${limits ? ` · limits: ${limits}${enforced}` : ""}`;
}

function NewSession({ app, onDone }: { app: App; onDone: () => void }) {
  const providers = app.providers;
  // The server's default provider first (what a session without one gets), else the first usable.
  const firstAvailable = (providers.find((p) => p.default && p.available) ?? providers.find((p) => p.available))?.id ?? "";
  const [provider, setProvider] = useState(firstAvailable);
  const [sessionId, setSessionId] = useState("");
  const [title, setTitle] = useState("");
  const [cwd, setCwd] = useState("");
  const [model, setModel] = useState("");
  const [policy, setPolicy] = useState("");
  const [worktree, setWorktree] = useState(false);
  const [repo, setRepo] = useState("");
  const [branch, setBranch] = useState("");
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (!provider && firstAvailable) setProvider(firstAvailable);
  }, [firstAvailable]);
  const chosen: ProviderInfo | undefined = providers.find((p) => p.id === provider);
  const val = (set: (v: string) => void) => (e: Event) => set((e.currentTarget as HTMLInputElement).value);
  return (
    <form
      class="new-session"
      data-testid="new-session-form"
      onSubmit={async (ev) => {
        ev.preventDefault();
        if (!app.selectedRoom || busy) return;
        setBusy(true);
        const settings: Schemas["SessionSettings"] = {};
        if (model.trim()) settings.model = model.trim();
        if (policy) settings.approvalPolicy = policy as Schemas["ApprovalPolicy"];
        const body: Schemas["StartSessionRequest"] = { provider: provider || null };
        if (sessionId.trim()) body.sessionId = sessionId.trim();
        if (title.trim()) body.title = title.trim();
        if (cwd.trim()) body.cwd = cwd.trim();
        if (Object.keys(settings).length) body.settings = settings;
        if (worktree) body.workspace = { kind: "worktree", repo: repo.trim(), ...(branch.trim() ? { branch: branch.trim() } : {}) };
        const s = await app.startSession(app.selectedRoom, body);
        setBusy(false);
        if (s) {
          setSessionId("");
          setTitle("");
          onDone();
        }
      }}
    >
      <label>
        Provider
        <select data-testid="provider-select" value={provider} onChange={val(setProvider)}>
          {providers.map((p) => (
            <option value={p.id} disabled={!p.available} title={p.unavailableReason ?? undefined}>
              {showControls(p.displayName)}
              {p.available ? "" : ` — unavailable: ${p.unavailableReason ?? "unknown reason"}`}
              {p.isolation?.warning ? " — isolation off" : ""}
            </option>
          ))}
        </select>
      </label>
      {providers.some((p) => !p.available) ? (
        <ul class="dim unavailable" data-testid="unavailable-providers">
          {providers
            .filter((p) => !p.available)
            .map((p) => (
              <li>
                {showControls(p.displayName)}: {p.unavailableReason ?? "unavailable"}
              </li>
            ))}
        </ul>
      ) : null}
      {providers.some((p) => p.isolation?.warning) ? (
        <ul class="warn isolation-off" data-testid="isolation-warnings">
          {providers
            .filter((p) => p.isolation?.warning)
            .map((p) => (
              <li data-provider={p.id}>
                {showControls(p.displayName)} runs with isolation off: {showControls(p.isolation?.warning ?? "")}
              </li>
            ))}
        </ul>
      ) : null}
      <label>
        Session id <span class="dim">(optional)</span>
        <input value={sessionId} onInput={val(setSessionId)} data-testid="session-id-input" autoComplete="off" />
      </label>
      <label>
        Title <span class="dim">(optional)</span>
        <input value={title} onInput={val(setTitle)} data-testid="title-input" autoComplete="off" />
      </label>
      <label class="check">
        <input type="checkbox" checked={worktree} data-testid="worktree-toggle" onChange={(e) => setWorktree((e.currentTarget as HTMLInputElement).checked)} />
        In a new worktree of…
      </label>
      {worktree ? (
        <>
          <label>
            Repository <span class="dim">(absolute path, inside the workspace roots)</span>
            <input value={repo} onInput={val(setRepo)} data-testid="worktree-repo" placeholder="/absolute/path/to/repo" autoComplete="off" required />
          </label>
          <label>
            Branch <span class="dim">{"(optional; default ensemble/<room>/<session>)"}</span>
            <input value={branch} onInput={val(setBranch)} data-testid="worktree-branch" autoComplete="off" />
          </label>
        </>
      ) : null}
      <label>
        Working directory <span class="dim">{worktree ? "(optional, relative to the worktree)" : "(default: the server's)"}</span>
        <input value={cwd} onInput={val(setCwd)} data-testid="cwd-input" placeholder={worktree ? "relative/path" : "/absolute/path"} autoComplete="off" />
      </label>
      <label>
        Model <span class="dim">(optional)</span>
        <input value={model} onInput={val(setModel)} data-testid="model-input" autoComplete="off" />
      </label>
      <label>
        Approval policy
        <select value={policy} onChange={val(setPolicy)} data-testid="approval-select">
          <option value="">provider default</option>
          <option value="untrusted">untrusted (ask for everything)</option>
          <option value="on-request">on request</option>
          <option value="never">never ask</option>
        </select>
      </label>
      <div class="row">
        <button type="submit" class="primary" data-testid="start-session" disabled={busy || !chosen?.available || (worktree && !repo.trim())}>
          Start session
        </button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function SessionView({ app, st }: { app: App; st: SessionState }) {
  const room = app.room();
  const s = st.session;
  const provider = app.providers.find((p) => p.id === s.provider);
  const sides = room?.sidesOf(st.id) ?? [];
  const [confirmClose, setConfirmClose] = useState(false);
  const closeButton = useRef<HTMLButtonElement>(null);
  const refocusClose = useRef(false);
  useLayoutEffect(() => {
    // Back from the confirmation without closing: the focus returns to the button that opened it.
    if (!confirmClose && refocusClose.current) {
      refocusClose.current = false;
      closeButton.current?.focus();
    }
  }, [confirmClose]);
  const [sideOk, setSideOk] = useState<string | null>(null);
  useEffect(() => {
    setSideOk(null);
    if (!s.live) return;
    let gone = false;
    app.sideCapabilities(st.id).then(
      (c) => !gone && setSideOk(c.supported && c.activeSourceTurn && c.ephemeral && c.hideInheritedTurns && c.modelBoundaryInjected ? "" : "this agent cannot open side conversations"),
      () => !gone && setSideOk("side conversations are not available"),
    );
    return () => {
      gone = true;
    };
  }, [st.id, s.live]);
  const [pane, setPane] = useState<"transcript" | "changes" | "files">("transcript");
  const [commitOpen, setCommitOpen] = useState(false);
  const commitButton = useRef<HTMLButtonElement>(null);
  const wsLine = workspaceText(s.workspace);
  const checkpoints = hasCheckpoints(s.workspace);
  const forkedFrom = s.forkedFrom ?? null;
  const forkSource = forkedFrom ? room?.session(forkedFrom.sessionId) : undefined;
  const closed = st.status === "completed";
  const operate = app.may("operator");
  const sideReason = closed ? "the session is closed" : !s.live ? "resume the session first" : sideOk === null ? "checking…" : sideOk;
  return (
    <section class="session-view" data-testid="session-view" data-session={st.id} aria-label={`Session ${displayName(st)}`}>
      <div class="session-head">
        <div class="title-row">
          <h2>{displayName(st)}</h2>
          <Badge status={st.status} />
        </div>
        <div class="dim meta">
          {st.id} · {showControls(provider?.displayName ?? s.provider)} · {showControls(s.cwd)}
          {modelText(s.settings.model)}
          {s.settings.approvalPolicy ? ` · approvals: ${s.settings.approvalPolicy}` : ""}
          {s.live ? "" : " · not live"}
        </div>
        {s.isolation ? (
          <div class={s.isolation.mode === "off" ? "warn meta" : "dim meta"} data-testid="session-isolation" data-mode={s.isolation.mode}>
            {isolationText(s.isolation)}
          </div>
        ) : null}
        {wsLine || forkedFrom ? (
          <div class="dim meta workspace-line">
            {wsLine ? <span data-testid="session-workspace" data-kind={s.workspace?.kind} data-branch={s.workspace?.branch ?? undefined}>{wsLine}</span> : null}
            {wsLine && forkedFrom ? " · " : ""}
            {forkedFrom ? (
              <span data-testid="session-forked-from" data-source={forkedFrom.sessionId} data-turn={forkedFrom.turnId}>
                {forkSource ? (
                  <button type="button" class="link" data-testid="fork-source" title={`Open ${forkedFrom.sessionId}`} onClick={() => app.selectSession(forkedFrom.sessionId)}>
                    {forkText(forkedFrom, displayName(forkSource), forkSource.transcript.turnNumber(forkedFrom.turnId))}
                  </button>
                ) : (
                  forkText(forkedFrom, null, null)
                )}
              </span>
            ) : null}
          </div>
        ) : null}
        <SessionUsageLine app={app} st={st} />
        {s.lastError ? <div class="warn">Last error: {s.lastError}</div> : null}
        {s.authState === "auth_required" ? (
          <div class="warn" data-testid="auth-required" role="status">
            Authentication needed: {showControls(s.authMessage?.trim() || "the agent needs a login before it can take a turn.")}
          </div>
        ) : null}
        <div class="row actions">
          {operate && !s.live && s.resumable && !closed ? (
            <button type="button" data-testid="resume" onClick={() => void app.resume(st.id)}>
              Resume
            </button>
          ) : null}
          {operate && s.live && !closed ? (
            <button type="button" data-testid="release" disabled={st.status !== "ready"} title="Stop the agent process; the session resumes on its next turn" onClick={() => void app.release(st.id)}>
              Release
            </button>
          ) : null}
          {operate && !closed ? (
            <button type="button" data-testid="open-side" disabled={sideReason !== ""} title={sideReason || "Ask a question on the side, without touching this session's history"} onClick={() => void app.openSide(st.id)}>
              Side conversation
            </button>
          ) : null}
          {sides.length ? (
            <span class="sides">
              {sides.map((side) => (
                <button
                  type="button"
                  class={`chip${app.selectedSide === side.id ? " on" : ""}`}
                  data-testid="side-item"
                  data-session={side.id}
                  title={side.id}
                  aria-pressed={app.selectedSide === side.id}
                  onClick={() => app.selectSide(side.id)}
                >
                  {room ? sideName(room, side) : side.id}
                </button>
              ))}
            </span>
          ) : null}
          {checkpoints ? (
            <span class="panes" role="group" aria-label="Show">
              {(["transcript", "changes", "files"] as const).map((p) => (
                <button type="button" class={`chip${pane === p ? " on" : ""}`} data-testid={`pane-${p}`} aria-pressed={pane === p} onClick={() => setPane(p)}>
                  {p === "transcript" ? "Transcript" : p === "changes" ? "Changes" : "Files"}
                </button>
              ))}
            </span>
          ) : null}
          {operate && s.workspace?.kind === "worktree" && !closed && !commitOpen ? (
            <button type="button" data-testid="commit-open" ref={commitButton} title={`Commit the worktree's changes on ${s.workspace.branch ?? "its branch"}`} onClick={() => setCommitOpen(true)}>
              Commit…
            </button>
          ) : null}
          {operate && !closed ? (
            confirmClose ? (
              <ConfirmClose
                onClose={() => {
                  setConfirmClose(false);
                  void app.close(st.id);
                }}
                onKeep={() => {
                  setConfirmClose(false);
                  refocusClose.current = true;
                }}
              />
            ) : (
              <button type="button" class="danger" data-testid="close-session" ref={closeButton} onClick={() => setConfirmClose(true)}>
                Close…
              </button>
            )
          ) : null}
        </div>
        {commitOpen ? (
          <CommitDialog
            app={app}
            st={st}
            onDone={() => {
              setCommitOpen(false);
              setTimeout(() => commitButton.current?.focus(), 0);
            }}
          />
        ) : null}
        {operate && !closed ? <ConfigBar app={app} st={st} /> : null}
      </div>
      {pane === "changes" && checkpoints ? <SessionChangesPanel app={app} st={st} /> : pane === "files" && checkpoints ? <FilesPanel app={app} st={st} /> : <TranscriptView app={app} st={st} />}
      {closed ? (
        <p class="dim" data-testid="session-closed">
          This session is closed{byText(st.closedBy)}.
        </p>
      ) : operate ? (
        <Composer app={app} st={st} steerable={provider?.capabilities.steer ?? true} queueable />
      ) : (
        <>
          <ReadOnlyNote app={app} />
          <QueuePanel app={app} st={st} canAct={false} steerable={provider?.capabilities.steer ?? true} running={st.activeTurnId !== null} onError={() => {}} />
        </>
      )}
    </section>
  );
}

/** Where the composer would be, for a token that may only watch. */
function ReadOnlyNote({ app }: { app: App }) {
  return (
    <p class="dim read-only" data-testid="read-only" role="note">
      {app.revoked ? "This token no longer works: what is shown stays, nothing more comes." : `Watching only: this token's role is ${app.role ?? "not known yet"}, which may not send to the agent.`}
    </p>
  );
}

/** "Close for good?": the focus moves to Keep; Escape (anywhere on the page) keeps the session. */
function ConfirmClose({ onClose, onKeep }: { onClose: () => void; onKeep: () => void }) {
  const keep = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    keep.current?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        e.preventDefault();
        onKeep();
      }
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);
  return (
    <span class="confirm" role="group" aria-label="Confirm closing" data-testid="confirm-close-dialog">
      Close for good?
      <button type="button" class="danger" data-testid="confirm-close" onClick={onClose}>
        Close session
      </button>
      <button type="button" data-testid="keep-session" ref={keep} onClick={onKeep} title="Keep the session (Escape)">
        Keep
      </button>
    </span>
  );
}

function ConfigBar({ app, st }: { app: App; st: SessionState }) {
  const s = st.session;
  const options = s.configOptions ?? [];
  if (!s.modes && !options.length) return null;
  return (
    <div class="row config" data-testid="config">
      {s.modes ? (
        <label>
          Mode
          <select data-testid="mode-select" value={s.modes.current} onChange={(e) => void app.configure(st.id, { mode: (e.currentTarget as HTMLSelectElement).value })}>
            {s.modes.available.map((m) => (
              <option value={m.id} title={shown(m.description)}>
                {showControls(m.name)}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      {options.map((o) => (
        <label title={shown(o.description)}>
          {showControls(o.name)}
          <select data-testid={`config-${o.id}`} value={o.current} onChange={(e) => void app.configure(st.id, { options: { [o.id]: (e.currentTarget as HTMLSelectElement).value } })}>
            {o.choices.map((c) => (
              <option value={c.value} title={shown(c.description)}>
                {showControls(c.name)}
              </option>
            ))}
          </select>
        </label>
      ))}
    </div>
  );
}

function TranscriptView({ app, st, label }: { app: App; st: SessionState; label?: string }) {
  const box = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const canAct = app.may("operator");
  const canAnswer = app.may("approver");
  const myTokenId = app.me?.tokenId ?? null;
  const ctx: ItemContext = useMemo(
    () => ({
      answer: (requestId, body) => app.answer(st.id, requestId, body),
      attachment: (attachment) => app.attachment(st.id, attachment),
      goalOperationId: st.goal?.operationId ?? null,
      claimFocus: (requestId) => app.claimFocus(st.id, requestId),
      canAnswer,
      myTokenId,
      workspace:
        !st.isSide && hasCheckpoints(st.session.workspace)
          ? {
              diff: (turn, path) => app.changes(st.id, turn ? { turn, path } : { path }),
              restore: (checkpoint) => app.restore(st.id, checkpoint),
              fork: (turnId) => app.fork(st.id, turnId),
              turnNumber: (turnId) => st.transcript.turnNumber(turnId),
              canAct,
            }
          : null,
    }),
    [st.id, st.goal?.operationId, !st.isSide && hasCheckpoints(st.session.workspace), canAct, canAnswer, myTokenId],
  );
  useLayoutEffect(() => {
    const el = box.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  });
  return (
    <div
      class="transcript"
      data-testid="transcript"
      ref={box}
      role="log"
      aria-label={label ?? "Transcript"}
      tabIndex={0}
      onScroll={(e) => {
        const el = e.currentTarget as HTMLDivElement;
        stick.current = el.scrollTop + el.clientHeight >= el.scrollHeight - 24;
      }}
    >
      {st.transcript.items.length ? <TranscriptItems transcript={st.transcript} ctx={ctx} /> : <p class="dim">Nothing yet.</p>}
    </div>
  );
}

/**
 * The message box. `queueable` (a session, not a side conversation): while a turn runs, what is typed
 * can be queued as a follow-up (the Queue button, Alt+Enter; Ctrl+Enter where the agent cannot
 * steer), and the session's queue is shown under it.
 */
function Composer({ app, st, steerable, queueable }: { app: App; st: SessionState; steerable: boolean; queueable: boolean }) {
  const [text, setText] = useState("");
  const [busy, setBusy] = useState(false);
  const [images, setImages] = useState<PendingImage[]>([]);
  /** Why an image was not taken or not sent (shown beside the images). */
  const [imageError, setImageError] = useState<string | null>(null);
  /** Why a follow-up was not queued, or a change of the queue refused (`queue_full`, …). */
  const [queueError, setQueueError] = useState<string | null>(null);
  /** Why a turn was not sent: the session's or the room's budget is reached (409 `budget_exhausted`). */
  const [budgetError, setBudgetError] = useState<string | null>(null);
  const [dropping, setDropping] = useState(false);
  const dragDepth = useRef(0);
  const nextImage = useRef(0);
  const fileInput = useRef<HTMLInputElement>(null);
  // The thumbnails' blob: URLs go with the composer.
  const shown = useRef<PendingImage[]>([]);
  shown.current = images;
  useEffect(() => () => shown.current.forEach((i) => URL.revokeObjectURL(i.url)), []);
  const running = st.activeTurnId !== null || st.status === "working" || st.status === "waiting";
  /** Queue is offered while a turn runs, or while follow-ups wait (after a restart, before one is sent). */
  const offerQueue = queueable && (running || st.queue.length > 0);
  const modes = { running, steerable, queueable };
  const primary = primaryAction(modes);
  const id = `composer-${st.id}`;
  const sendable = text.trim() !== "" || images.length > 0;
  /** Takes the image files among `files`; the others are refused, each with its reason. */
  const attach = (files: File[]) => {
    if (!files.length) return;
    const refused: string[] = [];
    const taken: PendingImage[] = [];
    for (const f of files) {
      const why = refuseImage(f);
      if (why || !isImageType(f.type)) {
        refused.push(why ?? "");
        continue;
      }
      const n = ++nextImage.current;
      taken.push({ id: n, file: f, name: imageName(f, n), mimeType: f.type, size: f.size, url: URL.createObjectURL(f) });
    }
    setImageError(refused.length ? refused.join(" ") : null);
    if (taken.length) setImages((list) => [...list, ...taken]);
  };
  const remove = (imageId: number) => {
    const gone = images.find((i) => i.id === imageId);
    if (gone) URL.revokeObjectURL(gone.url);
    setImages(images.filter((i) => i.id !== imageId));
  };
  const submit = async (how: SubmitHow) => {
    if (!sendable || busy) return;
    setBusy(true);
    const sent = images;
    let outgoing: OutgoingImage[];
    try {
      outgoing = await Promise.all(sent.map(async (i) => ({ name: i.name, mimeType: i.mimeType, data: toBase64(new Uint8Array(await i.file.arrayBuffer())) })));
    } catch (e) {
      setBusy(false);
      setImageError(`An image could not be read: ${(e as Error).message}`);
      return;
    }
    const sentText = text;
    const r = await app.submit(st.id, turnInput(sentText, outgoing), how);
    setBusy(false);
    if (r.ok) {
      // What was typed while it was being sent stays for the next one.
      setText((now) => (now === sentText ? "" : now));
      sent.forEach((i) => URL.revokeObjectURL(i.url));
      setImages((list) => list.filter((i) => !sent.includes(i)));
      setImageError(null);
      setQueueError(null);
      setBudgetError(null);
    } else if (r.attachmentError) {
      setImageError(r.attachmentError);
    } else if (r.queueError) {
      setQueueError(r.queueError);
    } else if (r.budgetError) {
      setBudgetError(r.budgetError);
    }
  };
  const hasFiles = (dt: DataTransfer | null) => !!dt && [...dt.types].includes("Files");
  const placeholder = running
    ? steerable
      ? `A turn is running: Ctrl+Enter steers it${queueable ? ", Alt+Enter queues a follow-up" : ""}`
      : queueable
        ? "A turn is running: Ctrl+Enter queues a follow-up for after it"
        : "A turn is running"
    : st.session.live
      ? "Message (Ctrl+Enter sends; paste or drop images)"
      : "Message (sending resumes the session; Ctrl+Enter sends)";
  return (
    <>
      <form
        class={`composer${dropping ? " dropping" : ""}`}
        data-testid="composer-form"
        onSubmit={(ev) => {
          ev.preventDefault();
          void submit(primary);
        }}
        onDragEnter={(ev) => {
          if (!hasFiles(ev.dataTransfer)) return;
          ev.preventDefault();
          dragDepth.current++;
          setDropping(true);
        }}
        onDragOver={(ev) => {
          if (!hasFiles(ev.dataTransfer)) return;
          ev.preventDefault();
          if (ev.dataTransfer) ev.dataTransfer.dropEffect = "copy";
        }}
        onDragLeave={(ev) => {
          if (!hasFiles(ev.dataTransfer)) return;
          dragDepth.current = Math.max(0, dragDepth.current - 1);
          if (!dragDepth.current) setDropping(false);
        }}
        onDrop={(ev) => {
          if (!hasFiles(ev.dataTransfer)) return;
          ev.preventDefault();
          dragDepth.current = 0;
          setDropping(false);
          attach([...(ev.dataTransfer?.files ?? [])]);
        }}
      >
        <label for={id} class="sr-only">
          Message to {st.isSide ? "the side conversation" : "the agent"}
        </label>
        <textarea
          id={id}
          data-testid="composer"
          placeholder={placeholder}
          value={text}
          onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)}
          onPaste={(e) => {
            // A pasted image (a screenshot) is attached; pasted text stays text (a spreadsheet's
            // cells come with a picture of them too).
            const cd = e.clipboardData;
            if (!cd || cd.getData("text/plain")) return;
            const files = cd.files.length ? [...cd.files] : [...cd.items].filter((i) => i.kind === "file").map((i) => i.getAsFile()).filter((f): f is File => f !== null);
            if (!files.length) return;
            e.preventDefault();
            attach(files);
          }}
          onKeyDown={(e) => {
            const how = composerKey(e, modes);
            if (how) {
              e.preventDefault();
              void submit(how);
            }
          }}
        />
        <PendingImages images={images} onRemove={remove} />
        {imageError ? (
          <p class="warn attach-error" role="alert" data-testid="attach-error">
            {imageError}
          </p>
        ) : null}
        {queueError ? (
          <p class="warn queue-error" role="alert" data-testid="queue-error">
            {queueError}
            <button type="button" class="link" aria-label="Dismiss this message" onClick={() => setQueueError(null)}>
              ×
            </button>
          </p>
        ) : null}
        {budgetError ? (
          <p class="warn queue-error" role="alert" data-testid="submit-error" data-code="budget_exhausted">
            {budgetError}
            <button type="button" class="link" aria-label="Dismiss this message" onClick={() => setBudgetError(null)}>
              ×
            </button>
          </p>
        ) : null}
        <div class="row">
          {running && primary === "steer" ? (
            <button type="submit" class="primary" data-testid="steer" disabled={busy || !sendable} title="Add this to the running turn (Ctrl+Enter)">
              Steer
            </button>
          ) : null}
          {offerQueue ? (
            <button
              type={primary === "queue" ? "submit" : "button"}
              class={primary === "queue" ? "primary" : undefined}
              data-testid="queue-turn"
              disabled={busy || !sendable}
              title={`Queue this as a follow-up: it starts when the turns before it have ended (${primary === "queue" ? "Ctrl+Enter or Alt+Enter" : "Alt+Enter"})`}
              onClick={primary === "queue" ? undefined : () => void submit("queue")}
            >
              Queue
            </button>
          ) : null}
          {running ? (
            <button type="button" class="danger" data-testid="cancel" onClick={() => void app.cancel(st.id)}>
              Cancel turn
            </button>
          ) : null}
          {!running ? (
            <button type="submit" class="primary" data-testid="send" disabled={busy || !sendable}>
              Send
            </button>
          ) : null}
          <button type="button" data-testid="attach-image" title="Attach a PNG, JPEG, GIF or WebP image (at most 5 MiB); you can also paste or drop one here" onClick={() => fileInput.current?.click()}>
            Attach image
          </button>
          <input
            type="file"
            ref={fileInput}
            hidden
            tabIndex={-1}
            multiple
            accept={IMAGE_ACCEPT}
            aria-label="Attach image"
            data-testid="attach-input"
            onChange={(e) => {
              const el = e.currentTarget as HTMLInputElement;
              attach([...(el.files ?? [])]);
              el.value = "";
            }}
          />
          <span class="dim hint">{running && queueable && primary === "steer" ? "Ctrl+Enter steers · Alt+Enter queues" : primary === "queue" ? "Ctrl+Enter queues" : "Ctrl+Enter"}</span>
        </div>
      </form>
      {queueable ? <QueuePanel app={app} st={st} canAct steerable={steerable} running={running} onError={setQueueError} /> : null}
    </>
  );
}

function GoalPanel({ app, st }: { app: App; st: SessionState }) {
  const [objective, setObjective] = useState("");
  const provider = app.providers.find((p) => p.id === st.session.provider);
  const g = st.goal;
  const unsupported = provider && !provider.capabilities.goals;
  const turns = st.autoTurns;
  const closed = st.status === "completed";
  const operate = app.may("operator");
  return (
    <section class="panel goal-panel" data-testid="goal-panel" aria-labelledby="goal-h">
      <h2 id="goal-h">Goal</h2>
      {unsupported ? <p class="dim">{showControls(provider.displayName)} does not pursue goals.</p> : null}
      <div class="goal-state">
        <span class={`badge goal-${g?.status ?? "none"}`} data-testid="goal-status" data-status={g?.status ?? "none"}>
          {g ? g.status : "no goal"}
        </span>
        {g ? <span class="goal-objective-text">{showControls(g.objective)}</span> : null}
      </div>
      {g && (g.tokensUsed != null || g.tokenBudget != null) ? (
        <div class="dim">
          tokens used {g.tokensUsed ?? 0}
          {g.tokenBudget != null ? ` of ${g.tokenBudget}` : ""}
        </div>
      ) : null}
      {operate && !closed && !unsupported ? (
        <>
          <form
            class="row"
            onSubmit={async (ev) => {
              ev.preventDefault();
              if (!objective.trim()) return;
              if (await app.setGoal(st.id, objective.trim())) setObjective("");
            }}
          >
            <label class="grow">
              <span class="sr-only">Objective</span>
              <input data-testid="goal-objective" placeholder={g ? "new objective" : "objective"} value={objective} onInput={(e) => setObjective((e.currentTarget as HTMLInputElement).value)} autoComplete="off" />
            </label>
            <button type="submit" data-testid="goal-set" disabled={!objective.trim()}>
              Set
            </button>
          </form>
          <div class="row">
            <button type="button" data-testid="goal-pause" disabled={g?.status !== "active"} onClick={() => void app.pauseGoal(st.id)}>
              Pause
            </button>
            <button type="button" data-testid="goal-resume" disabled={g?.status !== "paused"} onClick={() => void app.resumeGoal(st.id)}>
              Resume
            </button>
            <button type="button" data-testid="goal-clear" disabled={!g} onClick={() => void app.clearGoal(st.id)}>
              Clear
            </button>
          </div>
        </>
      ) : null}
      {turns.length ? (
        <div class="goal-turns">
          <h3>Turns the agent started</h3>
          <ul class="list" data-testid="goal-turns">
            {turns.map((t, i) => {
              const n = turns.slice(0, i + 1).filter((x) => x.origin === t.origin).length;
              return (
                <li data-origin={t.origin} data-testid="goal-turn" data-turn={t.turnId}>
                  <span class="turn-name" title={`turn ${t.turnId}`} data-testid="goal-turn-name">
                    {t.origin === "goal_continuation" ? `continuation ${n}` : `agent turn ${n}`}
                  </span>{" "}
                  <span class="dim">
                    {t.origin === "goal_continuation" ? (t.goalOperationId === g?.operationId ? "· goal continuation (current goal)" : "· goal continuation (an earlier goal)") : "· started by the agent, not credited to a goal"}
                  </span>
                </li>
              );
            })}
          </ul>
        </div>
      ) : null}
    </section>
  );
}

function SidePanel({ app, st }: { app: App; st: SessionState }) {
  const ended = st.status === "completed";
  const room = app.room();
  const source = st.session.sourceSessionId ? room?.session(st.session.sourceSessionId) : undefined;
  return (
    <section class="panel side-panel" data-testid="side-panel" data-session={st.id} aria-labelledby="side-h">
      <div class="row spread">
        <h2 id="side-h" data-testid="side-title" title={st.id}>
          {room ? sideName(room, st) : "Side conversation"}
        </h2>
        <Badge status={st.status} />
      </div>
      <div class="dim">
        On the side of {source ? displayName(source) : st.session.sourceSessionId}; not part of its history
      </div>
      <TranscriptView app={app} st={st} label="Side conversation transcript" />
      {!ended && !app.may("operator") ? (
        <ReadOnlyNote app={app} />
      ) : !ended ? (
        <>
          <Composer app={app} st={st} steerable={false} queueable={false} />
          <div class="row">
            <button type="button" data-testid="close-side" onClick={() => void app.close(st.id)}>
              End side conversation
            </button>
          </div>
        </>
      ) : (
        <p class="dim">This side conversation has ended.</p>
      )}
      <button type="button" class="link" data-testid="hide-side" onClick={() => app.selectSide(null)}>
        Hide
      </button>
    </section>
  );
}
