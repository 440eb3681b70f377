// The open session: its head (name, status, provider, isolation, workspace and fork, usage, the
// actions, close with a confirmation, the agent's modes and options), then the transcript or the
// workspace's changes or files, then the composer (or why this token may not send).

import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import type { App } from "../app.js";
import type { SessionState } from "../model.js";
import { modelText, showControls, shown } from "../shown.js";
import { sideName } from "../present.js";
import { forkText, hasCheckpoints, workspaceText } from "../changes.js";
import { CommitDialog, FilesPanel, SessionChangesPanel } from "./workspace.js";
import { byText } from "../access.js";
import { QueuePanel } from "./queue.js";
import { SessionUsageLine } from "./usage.js";
import type { Schemas } from "../../../openapi/clients/typescript/src/client.js";
import { Badge, displayName } from "./sessionlabel.js";
import { TranscriptView } from "./transcript.js";
import { Composer, ReadOnlyNote } from "./composer.js";

/// What a session's box is, in a line: its network and limits, or that it has none.
function isolationText(i: Schemas["Isolation"]): string {
  if (i.mode === "off") return "isolation off: the agent can read and do whatever the server's user can";
  const net = i.network === "all" ? "any host" : (i.network ?? []).length ? (i.network as string[]).join(", ") : "no network";
  const limits = [i.memoryMb != null ? `${i.memoryMb} MiB` : "", i.maxProcesses != null ? `${i.maxProcesses} processes` : ""].filter(Boolean).join(", ");
  const enforced = i.limits === "unenforced" ? " (not enforced here)" : "";
  return `isolated · network: ${showControls(net)}${limits ? ` · limits: ${limits}${enforced}` : ""}`;
}

export function SessionView({ app, st }: { app: App; st: SessionState }) {
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
  const [renaming, setRenaming] = useState(false);
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
          {renaming ? (
            <Rename
              title={s.title}
              onDone={async (title) => {
                if (title !== null && title.trim() && title.trim() !== s.title && !(await app.rename(st.id, title.trim()))) return;
                setRenaming(false);
              }}
            />
          ) : (
            <>
              <h2>{displayName(st)}</h2>
              {operate ? (
                <button type="button" class="link" data-testid="rename-session" title="Rename this session" onClick={() => setRenaming(true)}>
                  Rename
                </button>
              ) : null}
            </>
          )}
          <Badge status={st.status} canAnswer={app.may("approver")} />
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
                worktree={s.workspace?.kind === "worktree"}
                onClose={(purge) => {
                  setConfirmClose(false);
                  void app.close(st.id, purge);
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

/** "Close for good?": the focus moves to Keep; Escape (anywhere on the page) keeps the session. */
function ConfirmClose({ worktree, onClose, onKeep }: { worktree: boolean; onClose: (purge: boolean) => void; onKeep: () => void }) {
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
      <button type="button" class="danger" data-testid="confirm-close" onClick={() => onClose(false)}>
        Close session
      </button>
      {worktree ? (
        <button
          type="button"
          class="danger"
          data-testid="confirm-close-purge"
          title="Close, then delete its worktree and its checkpoints (and its branch when merged): what was not committed is gone"
          onClick={() => onClose(true)}
        >
          Close and remove its worktree
        </button>
      ) : null}
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

/** The title in a box, saved with Enter or Save, left with Escape or Cancel. */
function Rename({ title, onDone }: { title: string; onDone: (title: string | null) => void }) {
  const [value, setValue] = useState(title);
  const box = useRef<HTMLInputElement>(null);
  useEffect(() => {
    box.current?.focus();
    box.current?.select();
  }, []);
  return (
    <form
      class="row rename"
      data-testid="rename-form"
      onSubmit={(e) => {
        e.preventDefault();
        onDone(value);
      }}
    >
      <input
        ref={box}
        aria-label="Session title"
        data-testid="rename-input"
        value={value}
        maxLength={4096}
        onInput={(e) => setValue((e.currentTarget as HTMLInputElement).value)}
        onKeyDown={(e) => {
          if (e.key === "Escape") {
            e.preventDefault();
            onDone(null);
          }
        }}
      />
      <button type="submit" class="primary" data-testid="rename-save" disabled={!value.trim()}>
        Save
      </button>
      <button type="button" onClick={() => onDone(null)}>
        Cancel
      </button>
    </form>
  );
}
