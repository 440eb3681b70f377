// A session's workspace: a turn's changed files (each opening to its diff, fetched on demand), the
// whole session's changes, restore / undo / fork from the transcript, the commit dialog of a
// worktree session, and the file browser (a lazy tree, a preview, a fuzzy search).

import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { changesSummary, childPath, countsText, diffKind, shortSha, sizeText, statusText, type ChangedFile } from "../changes.js";
import type { App } from "../app.js";
import type { Item, SessionState } from "../model.js";
import { showControls } from "../text.js";
import { Confirm } from "./confirm.js";
import { byText } from "../access.js";
import { DiffView } from "./diffview.js";
import type { Schemas } from "../../../openapi/clients/typescript/src/client.js";

type WorkspaceChanges = Schemas["WorkspaceChanges"];

/** What the transcript's workspace items can do for their session. */
export interface WorkspaceActions {
  /** One file's diff: of a turn (`turnId`), or of the whole session (null). */
  diff(turnId: string | null, path: string): Promise<WorkspaceChanges>;
  restore(checkpoint: string): Promise<unknown>;
  fork(turnId: string): Promise<unknown>;
  /** The turn's number in the session ("turn 2"), when known. */
  turnNumber(turnId: string): number | null;
  /** Whether the token may restore, undo and fork (operator and above); diffs are for everyone. */
  canAct: boolean;
}

/** A list of changed files, each a button that opens its diff (loaded once, when first opened). */
export function ChangedFiles({ files, load, label }: { files: ChangedFile[]; load: (path: string) => Promise<WorkspaceChanges>; label: string }) {
  return (
    <ul class="changed-files" aria-label={label} data-testid="changed-files">
      {files.map((f) => (
        <ChangedFileRow key={f.path} file={f} load={load} />
      ))}
    </ul>
  );
}

function ChangedFileRow({ file, load }: { file: ChangedFile; load: (path: string) => Promise<WorkspaceChanges> }) {
  const [open, setOpen] = useState(false);
  const [diff, setDiff] = useState<{ text: string; truncated: boolean } | { error: string } | null>(null);
  useEffect(() => {
    if (!open || diff || file.binary) return;
    let gone = false;
    load(file.path).then(
      (c) => !gone && setDiff({ text: c.diff, truncated: c.truncated }),
      (e) => !gone && setDiff({ error: (e as Error).message }),
    );
    return () => {
      gone = true;
    };
  }, [open]);
  return (
    <li class="changed-file" data-testid="changed-file" data-path={file.path} data-status={file.status} data-added={file.added} data-removed={file.removed} data-binary={file.binary ? "true" : undefined}>
      <button type="button" class="file-toggle" aria-expanded={open} data-testid="changed-file-toggle" onClick={() => setOpen(!open)}>
        <span aria-hidden="true">{open ? "▾" : "▸"}</span> <span class="diff-path">{showControls(file.path)}</span> <span class={`badge status-${file.status}`}>{statusText(file)}</span>{" "}
        {file.binary ? (
          <span class="badge" data-testid="changed-file-binary">
            binary
          </span>
        ) : (
          <span class="counts" data-testid="changed-file-counts">
            <span class="added">+{file.added}</span> <span class="removed">−{file.removed}</span>
          </span>
        )}
      </button>
      {open ? (
        <div class="changed-file-diff" data-testid="changed-file-diff">
          {file.binary ? (
            <p class="dim">Binary file: no diff to show.</p>
          ) : !diff ? (
            <p class="dim">Loading the diff…</p>
          ) : "error" in diff ? (
            <p class="warn" role="alert">
              The diff could not be read: {diff.error}
            </p>
          ) : (
            <>
              <DiffView change={{ path: file.path, kind: diffKind(file.status), diff: diff.text }} />
              {diff.truncated ? (
                <p class="warn" data-testid="diff-truncated">
                  The diff is cut here: it is longer than the server shows.
                </p>
              ) : null}
            </>
          )}
        </div>
      ) : null}
    </li>
  );
}

/** A turn's Changes block (`turn.changes`): its files, Restore to before it, Fork from it. */
export function TurnChangesView({ item, ws }: { item: Extract<Item, { kind: "changes" }>; ws: WorkspaceActions | null }) {
  const [confirm, setConfirm] = useState(false);
  const [busy, setBusy] = useState(false);
  const restoreButton = useRef<HTMLButtonElement>(null);
  const refocus = useRef(false);
  useLayoutEffect(() => {
    if (!confirm && refocus.current) {
      refocus.current = false;
      restoreButton.current?.focus();
    }
  }, [confirm]);
  const n = ws?.turnNumber(item.turnId) ?? null;
  const turnName = n !== null ? `turn ${n}` : "this turn";
  return (
    <div class="entry changes" data-testid="turn-changes" data-turn={item.turnId} data-files={item.files.length} role="group" aria-label={`Changes of ${turnName}`}>
      <div class="who">
        Changes <span class="dim" data-testid="changes-summary">· {changesSummary(item.files)}</span>
      </div>
      {item.files.length ? <ChangedFiles files={item.files} label={`Files ${turnName} changed`} load={(path) => ws?.diff(item.turnId, path) ?? Promise.reject(new Error("no workspace"))} /> : null}
      {item.skipped.length ? (
        <p class="dim" data-testid="changes-skipped">
          Not in the checkpoints (too large): {item.skipped.map(showControls).join(", ")}
        </p>
      ) : null}
      {ws?.canAct ? (
        <div class="row">
          {confirm ? (
            <Confirm
              question={`Put the files back as they were before ${turnName}?`}
              label="Confirm restoring"
              confirmText="Restore"
              keepText="Keep the files"
              testid="confirm-restore-dialog"
              confirmTestid="confirm-restore"
              keepTestid="keep-files"
              onConfirm={async () => {
                setConfirm(false);
                setBusy(true);
                await ws.restore(item.before);
                setBusy(false);
              }}
              onKeep={() => {
                refocus.current = true;
                setConfirm(false);
              }}
            />
          ) : (
            <button type="button" data-testid="restore-turn" ref={restoreButton} disabled={busy} title="Put the working tree back to the checkpoint taken before this turn (undoable)" onClick={() => setConfirm(true)}>
              Restore to before this turn…
            </button>
          )}
          <button
            type="button"
            data-testid="fork-turn"
            disabled={busy}
            title="A new session with this conversation and these files through this turn, in a worktree of its own"
            onClick={async () => {
              setBusy(true);
              await ws.fork(item.turnId);
              setBusy(false);
            }}
          >
            Fork from here
          </button>
        </div>
      ) : null}
    </div>
  );
}

/** `workspace.restored`: a line with Undo (restores the checkpoint taken just before). */
export function RestoredView({ item, ws }: { item: Extract<Item, { kind: "restored" }>; ws: WorkspaceActions | null }) {
  const [busy, setBusy] = useState(false);
  return (
    <div class="entry info restored" data-testid="workspace-restored" data-checkpoint={item.checkpoint} data-undo={item.undo} data-actor={item.actor?.name}>
      Files restored to checkpoint <code title={item.checkpoint}>{shortId(item.checkpoint)}</code>
      {byText(item.actor)}{" "}
      {ws?.canAct ? (
        <button
          type="button"
          data-testid="undo-restore"
          disabled={busy}
          title="Put the files back as they were just before this restore"
          onClick={async () => {
            setBusy(true);
            await ws.restore(item.undo);
            setBusy(false);
          }}
        >
          Undo
        </button>
      ) : null}
    </div>
  );
}

export function CommittedView({ item }: { item: Extract<Item, { kind: "committed" }> }) {
  return (
    <div class="entry info committed" data-testid="workspace-committed" data-commit={item.commit} data-branch={item.branch} data-actor={item.actor?.name}>
      Committed <code title={item.commit}>{shortSha(item.commit)}</code> on <code>{showControls(item.branch)}</code>
      {byText(item.actor)}: {firstLine(item.message)}
    </div>
  );
}

function shortId(id: string): string {
  return id.length > 14 ? `${id.slice(0, 14)}…` : id;
}

function firstLine(s: string): string {
  return showControls(s.split("\n")[0] ?? "");
}

/** Commit… of a worktree session: asks for a message, then says the commit and branch (or why not). */
export function CommitDialog({ app, st, onDone }: { app: App; st: SessionState; onDone: () => void }) {
  const [message, setMessage] = useState("");
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<{ ok: string } | { error: string } | null>(null);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    input.current?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        e.preventDefault();
        onDone();
      }
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);
  return (
    <form
      class="commit-dialog"
      aria-label="Commit the worktree's changes"
      data-testid="commit-dialog"
      onSubmit={async (ev) => {
        ev.preventDefault();
        if (!message.trim() || busy) return;
        setBusy(true);
        const r = await app.commit(st.id, message.trim());
        setBusy(false);
        if (r.ok) {
          setResult({ ok: `Committed ${shortSha(r.data.commit)} on branch ${r.data.branch}` });
          setMessage("");
        } else {
          setResult({ error: r.error.code === "nothing_to_commit" ? `Nothing to commit: the worktree has no changes since its last commit. ${r.error.message}` : r.error.message });
        }
      }}
    >
      <label class="grow">
        <span class="sr-only">Commit message</span>
        <input ref={input} data-testid="commit-message" placeholder="commit message" value={message} onInput={(e) => setMessage((e.currentTarget as HTMLInputElement).value)} autoComplete="off" />
      </label>
      <button type="submit" class="primary" data-testid="commit-submit" disabled={busy || !message.trim()}>
        Commit
      </button>
      <button type="button" data-testid="commit-cancel" title="Close (Escape)" onClick={onDone}>
        {result && "ok" in result ? "Done" : "Cancel"}
      </button>
      {result ? (
        "ok" in result ? (
          <span class="ok" role="status" data-testid="commit-result">
            {result.ok}
          </span>
        ) : (
          <span class="warn" role="alert" data-testid="commit-error">
            {result.error}
          </span>
        )
      ) : null}
    </form>
  );
}

/** The whole session's changes: from its base to its latest checkpoint, read again after each turn or restore. */
export function SessionChangesPanel({ app, st }: { app: App; st: SessionState }) {
  const [state, setState] = useState<{ data: WorkspaceChanges } | { error: string } | null>(null);
  const [tick, setTick] = useState(0);
  const version = st.transcript.items.filter((i) => i.kind === "changes" || i.kind === "restored" || i.kind === "committed").length;
  useEffect(() => {
    let gone = false;
    app.changes(st.id, {}).then(
      (data) => !gone && setState({ data }),
      (e) => !gone && setState({ error: (e as Error).message }),
    );
    return () => {
      gone = true;
    };
  }, [st.id, version, tick]);
  return (
    <section class="workspace-pane" data-testid="session-changes" aria-label="The session's changes">
      <div class="row spread">
        <h3>Changes since the session's base</h3>
        <button type="button" data-testid="changes-refresh" onClick={() => setTick(tick + 1)}>
          Refresh
        </button>
      </div>
      {!state ? (
        <p class="dim">Loading…</p>
      ) : "error" in state ? (
        <p class="warn" data-testid="session-changes-error">
          {state.error}
        </p>
      ) : (
        <>
          <p class="dim" data-testid="session-changes-summary">
            {changesSummary(state.data.files)} · <code title={state.data.from}>{shortSha(state.data.from)}</code> → <code title={state.data.to}>{shortSha(state.data.to)}</code>
          </p>
          {state.data.files.length ? <ChangedFiles key={`${state.data.from}-${state.data.to}`} files={state.data.files} label="Files the session changed" load={(path) => app.changes(st.id, { path })} /> : null}
          {state.data.truncated ? (
            <p class="warn" data-testid="diff-truncated">
              The session's diff is longer than the server shows: open a file for its own diff.
            </p>
          ) : null}
        </>
      )}
    </section>
  );
}

type Listing = Schemas["FileListing"];
type Content = Schemas["FileContent"];

/** The workspace's files: a tree read one directory at a time, a preview, a search. */
export function FilesPanel({ app, st }: { app: App; st: SessionState }) {
  const [selected, setSelected] = useState<string | null>(null);
  const [query, setQuery] = useState("");
  const [found, setFound] = useState<{ q: string; data: Schemas["FileMatch"][]; truncated: boolean } | { error: string } | null>(null);
  const [tick, setTick] = useState(0);
  return (
    <section class="workspace-pane files" data-testid="files-panel" aria-label="The workspace's files">
      <form
        class="row"
        role="search"
        onSubmit={async (ev) => {
          ev.preventDefault();
          const q = query.trim();
          if (!q) {
            setFound(null);
            return;
          }
          try {
            const r = await app.searchFiles(st.id, q);
            setFound({ q, data: r.data, truncated: r.truncated });
          } catch (e) {
            setFound({ error: (e as Error).message });
          }
        }}
      >
        <label class="grow">
          <span class="sr-only">Search the workspace's files</span>
          <input type="search" data-testid="file-search" placeholder="find a file (fuzzy)" value={query} onInput={(e) => setQuery((e.currentTarget as HTMLInputElement).value)} autoComplete="off" />
        </label>
        <button type="submit" data-testid="file-search-submit">
          Search
        </button>
        <button type="button" data-testid="files-refresh" title="Read the directories again" onClick={() => setTick(tick + 1)}>
          Refresh
        </button>
      </form>
      {found ? (
        "error" in found ? (
          <p class="warn" role="alert">
            {found.error}
          </p>
        ) : (
          <div data-testid="file-search-results">
            <p class="dim">
              {found.data.length ? `${found.data.length} file${found.data.length === 1 ? "" : "s"} match “${found.q}”` : `No file matches “${found.q}”`}
              {found.truncated ? " (the search stopped early)" : ""}
            </p>
            <ul class="list">
              {found.data.map((m) => (
                <li key={m.path}>
                  <button type="button" class="link" data-testid="file-match" data-path={m.path} onClick={() => setSelected(m.path)}>
                    {showControls(m.path)}
                  </button>
                </li>
              ))}
            </ul>
          </div>
        )
      ) : null}
      <div class="files-body">
        <div class="file-tree" data-testid="file-tree" aria-label="Files">
          <DirView key={tick} app={app} st={st} path="" selected={selected} onSelect={setSelected} />
        </div>
        {selected ? <FilePreview key={`${selected}-${tick}`} app={app} st={st} path={selected} /> : <p class="dim file-preview">Pick a file to see it.</p>}
      </div>
    </section>
  );
}

function DirView({ app, st, path, selected, onSelect }: { app: App; st: SessionState; path: string; selected: string | null; onSelect: (p: string) => void }) {
  const [listing, setListing] = useState<Listing | { error: string } | null>(null);
  const [open, setOpen] = useState<Set<string>>(new Set());
  useEffect(() => {
    let gone = false;
    app.listFiles(st.id, path).then(
      (l) => !gone && setListing(l),
      (e) => !gone && setListing({ error: (e as Error).message }),
    );
    return () => {
      gone = true;
    };
  }, [path]);
  if (!listing) return <p class="dim">Loading…</p>;
  if ("error" in listing)
    return (
      <p class="warn" role="alert">
        {listing.error}
      </p>
    );
  return (
    <ul class="tree">
      {listing.entries.map((e) => {
        const p = childPath(path, e.name);
        if (e.kind === "dir") {
          const isOpen = open.has(p);
          return (
            <li key={p}>
              <button
                type="button"
                class="tree-item"
                data-testid="file-dir"
                data-path={p}
                aria-expanded={isOpen}
                onClick={() => {
                  const next = new Set(open);
                  if (isOpen) next.delete(p);
                  else next.add(p);
                  setOpen(next);
                }}
              >
                <span aria-hidden="true">{isOpen ? "▾" : "▸"}</span> {showControls(e.name)}/
              </button>
              {isOpen ? <DirView app={app} st={st} path={p} selected={selected} onSelect={onSelect} /> : null}
            </li>
          );
        }
        return (
          <li key={p}>
            <button type="button" class={`tree-item${selected === p ? " on" : ""}`} data-testid="file-entry" data-path={p} data-kind={e.kind} aria-current={selected === p ? "true" : undefined} disabled={e.kind !== "file"} onClick={() => onSelect(p)}>
              {showControls(e.name)} <span class="dim">{e.kind === "file" ? sizeText(e.size) : e.kind}</span>
            </button>
          </li>
        );
      })}
      {!listing.entries.length ? <li class="dim">(empty)</li> : null}
      {listing.truncated ? <li class="dim">More entries are not listed.</li> : null}
    </ul>
  );
}

function FilePreview({ app, st, path }: { app: App; st: SessionState; path: string }) {
  const [c, setC] = useState<Content | { error: string } | null>(null);
  useEffect(() => {
    let gone = false;
    app.fileContent(st.id, path).then(
      (x) => !gone && setC(x),
      (e) => !gone && setC({ error: (e as Error).message }),
    );
    return () => {
      gone = true;
    };
  }, [path]);
  return (
    <div class="file-preview" data-testid="file-preview" data-path={path}>
      <div class="who">
        <span class="diff-path">{showControls(path)}</span>
        {c && !("error" in c) ? <span class="dim"> · {sizeText(c.size)}</span> : null}
      </div>
      {!c ? (
        <p class="dim">Loading…</p>
      ) : "error" in c ? (
        <p class="warn" role="alert">
          {c.error}
        </p>
      ) : c.binary ? (
        <p class="dim" data-testid="file-binary">
          Binary file: not shown.
        </p>
      ) : (
        <>
          <pre class="file-content" data-testid="file-preview-content" tabIndex={0} aria-label={`contents of ${path}`}>
            {c.content ?? ""}
          </pre>
          {c.truncated ? (
            <p class="warn" data-testid="file-truncated">
              Only the start of the file is shown ({sizeText((c.content ?? "").length)} of {sizeText(c.size)}).
            </p>
          ) : null}
        </>
      )}
    </div>
  );
}
