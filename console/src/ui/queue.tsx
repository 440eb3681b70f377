// The session's queue of follow-ups, under the composer: each queued turn's text (and its images and
// files), to move up or down (`PUT …/queue`), edit in place (`PATCH …/queue/{turnId}`), remove
// (`DELETE`) or send now (`POST …/send`: steered into the running turn where the agent steers, else
// the running turn is canceled and this one goes first). What is shown is the session's latest
// `queue.updated` (or `GET …/queue`): a change shows once the server announced it, for every client.
// An event shows the beginning of a long text (and its size); an edit reads the whole text first.

import { useCallback, useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import type { App } from "../app.js";
import type { SessionState } from "../model.js";
import { editedInput, imagesToResend, moveInOrder, queuedLabel, queuedParts, wholeText, type QueuedSummary } from "../queue.js";
import { formatBytes, toBase64 } from "../attach.js";
import { showControls } from "../text.js";
import { TurnAttachments } from "./attachments.js";

type Control = "queued-up" | "queued-down" | "queued-edit" | "queued-remove" | "queued-send";

export function QueuePanel({
  app,
  st,
  canAct,
  steerable,
  running,
  onError,
}: {
  app: App;
  st: SessionState;
  canAct: boolean;
  steerable: boolean;
  running: boolean;
  /** A refusal of the server (or an edit overtaken by the queue), shown beside the composer. */
  onError: (message: string | null) => void;
}) {
  const queue = st.queue;
  const [editing, setEditing] = useState<string | null>(null);
  const [draft, setDraft] = useState("");
  /** The queued turn a request is under way for (its controls wait). */
  const [busy, setBusy] = useState<string | null>(null);
  const list = useRef<HTMLOListElement>(null);
  /**
   * Where the focus goes back: once the queue has changed from `after` (a move re-orders the items
   * under it, a removal takes its buttons away), or at once (`after: null`, an edit ended).
   */
  const refocus = useRef<{ turnId: string; control: Control; after: QueuedSummary[] | null } | null>(null);
  // One function per session: a new one would make every thumbnail read its image again (and revoke
  // the blob: URL it shows) on every render.
  const load = useCallback((attachment: string) => app.attachment(st.id, attachment), [app, st.id]);

  useLayoutEffect(() => {
    const want = refocus.current;
    // Not while its request is under way (its buttons wait, disabled), nor before the queue changed.
    if (!want || busy !== null || want.after === queue) return;
    refocus.current = null;
    const li = list.current?.querySelector<HTMLElement>(`li[data-turn="${CSS.escape(want.turnId)}"]`);
    const pick = (c: Control) => li?.querySelector<HTMLButtonElement>(`[data-testid="${c}"]:not([disabled])`);
    const target = pick(want.control) ?? pick(want.control === "queued-up" ? "queued-down" : "queued-up") ?? pick("queued-edit");
    // Nothing left to hold the focus (the last follow-up went): back to the message box.
    if (target) target.focus();
    else document.getElementById(`composer-${st.id}`)?.focus();
  });

  // An edit begins with the focus in its text.
  useEffect(() => {
    if (editing) list.current?.querySelector<HTMLTextAreaElement>(`li[data-turn="${CSS.escape(editing)}"] [data-testid="queued-edit-input"]`)?.focus();
  }, [editing]);

  // The turn being edited started (or was taken off the queue) before the edit was saved: say so.
  useEffect(() => {
    if (editing && !queue.some((q) => q.turnId === editing)) {
      setEditing(null);
      onError("The follow-up being edited left the queue (it started, or was removed) before the change was saved.");
    }
  }, [queue, editing]);

  if (!queue.length) return null;

  const act = async (q: QueuedSummary, what: string, fn: () => Promise<{ ok: true } | { ok: false; error: { message: string } }>) => {
    setBusy(q.turnId);
    const r = await fn();
    setBusy(null);
    if (r.ok) onError(null);
    else {
      refocus.current = null;
      onError(`${what} “${queuedLabel(q)}” failed: ${r.error.message}`);
    }
    return r.ok;
  };
  const move = (q: QueuedSummary, delta: -1 | 1) => {
    const order = moveInOrder(
      queue.map((x) => x.turnId),
      q.turnId,
      delta,
    );
    if (!order) return;
    refocus.current = { turnId: q.turnId, control: delta < 0 ? "queued-up" : "queued-down", after: queue };
    void act(q, "Moving", () => app.reorderQueue(st.id, order));
  };
  /** An edit starts from the whole text: the event's preview when it is all of it, else `GET …/queue`'s. */
  const startEdit = async (q: QueuedSummary) => {
    if (!q.truncated) {
      setDraft(q.preview);
      setEditing(q.turnId);
      return;
    }
    setBusy(q.turnId);
    let text: string | null = null;
    try {
      text = await wholeText(q, () => app.queued(st.id));
    } catch (e) {
      setBusy(null);
      onError(`Editing “${queuedLabel(q)}” failed: its text could not be read (${(e as Error).message})`);
      return;
    }
    setBusy(null);
    if (text === null) {
      onError("The follow-up left the queue (it started, or was removed) before it could be edited.");
      return;
    }
    onError(null);
    setDraft(text);
    setEditing(q.turnId);
  };
  const endEdit = (q: QueuedSummary) => {
    setEditing(null);
    refocus.current = { turnId: q.turnId, control: "queued-edit", after: null };
  };
  /** `q` leaves the queue: the focus goes to the follow-up that takes its place (or the one before it). */
  const leave = (q: QueuedSummary, i: number, control: Control, what: string, fn: () => Promise<{ ok: true } | { ok: false; error: { message: string } }>) => {
    const next = queue[i + 1] ?? queue[i - 1];
    refocus.current = { turnId: next?.turnId ?? "", control, after: queue };
    void act(q, what, fn);
  };
  const save = async (q: QueuedSummary) => {
    // Its images and files are all the event shows of its input besides the text, and all an edit keeps.
    const kept = q.attachments ?? [];
    if (!draft.trim() && !kept.length) {
      onError("A follow-up needs some text (or its images): remove it instead.");
      return;
    }
    const ok = await act(q, "Editing", async () => {
      // Its images go again as their bytes (the server takes no attachment ids from a client).
      const data = new Map<string, string>();
      try {
        for (const a of imagesToResend(kept)) data.set(a, toBase64(new Uint8Array(await (await app.attachment(st.id, a)).arrayBuffer())));
      } catch (e) {
        return { ok: false as const, error: { message: `its image could not be read again (${(e as Error).message})` } };
      }
      return app.editQueued(st.id, q.turnId, editedInput(kept, draft, data) ?? []);
    });
    if (ok) endEdit(q);
  };
  const sendTitle = !running
    ? "Start this follow-up now"
    : steerable
      ? "Send this now, into the running turn (steer)"
      : "Send this now: the running turn is canceled and this one starts";

  return (
    <section class="queue" data-testid="queue" aria-labelledby={`queue-h-${st.id}`}>
      <h3 id={`queue-h-${st.id}`} class="queue-head">
        Queued follow-ups ({queue.length}) <span class="dim">· they start in this order when the running turn ends</span>
      </h3>
      <ol class="queue-list" ref={list}>
        {queue.map((q, i) => {
          const { text, truncated, images, files } = queuedParts(q);
          const label = showControls(queuedLabel(q));
          const waiting = busy === q.turnId;
          return (
            <li class="queued" key={q.turnId} data-testid="queued-turn" data-turn={q.turnId} data-index={i}>
              <span class="queued-pos dim" aria-hidden="true">
                {i + 1}.
              </span>
              <div class="queued-body">
                {editing === q.turnId ? (
                  <form
                    class="queued-editor"
                    onSubmit={(ev) => {
                      ev.preventDefault();
                      void save(q);
                    }}
                  >
                    <textarea
                      data-testid="queued-edit-input"
                      aria-label={`New text of the follow-up “${label}”`}
                      value={draft}
                      onInput={(e) => setDraft((e.currentTarget as HTMLTextAreaElement).value)}
                      onKeyDown={(e) => {
                        if (e.key === "Escape") {
                          e.preventDefault();
                          endEdit(q);
                        } else if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
                          e.preventDefault();
                          void save(q);
                        }
                      }}
                    />
                    <span class="row">
                      <button type="submit" class="primary" data-testid="queued-edit-save" disabled={waiting}>
                        Save
                      </button>
                      <button type="button" data-testid="queued-edit-cancel" onClick={() => endEdit(q)} title="Keep it as it was (Escape)">
                        Cancel
                      </button>
                    </span>
                  </form>
                ) : (
                  <div class={`queued-text${text ? "" : " dim"}`} data-testid="queued-text">
                    {text ? showControls(text) : "(no text)"}
                    {truncated ? (
                      <span class="dim" data-testid="queued-more" title="The whole text shows when it is edited">
                        {`… (${formatBytes(q.bytes)} in all)`}
                      </span>
                    ) : null}
                  </div>
                )}
                <TurnAttachments images={images} files={files} load={load} />
              </div>
              {canAct && editing !== q.turnId ? (
                <span class="queued-actions" role="group" aria-label={`Follow-up ${i + 1}: ${label}`}>
                  <button type="button" data-testid="queued-up" aria-label={`Move “${label}” up`} title="Move up" disabled={waiting || i === 0} onClick={() => move(q, -1)}>
                    ↑
                  </button>
                  <button type="button" data-testid="queued-down" aria-label={`Move “${label}” down`} title="Move down" disabled={waiting || i === queue.length - 1} onClick={() => move(q, 1)}>
                    ↓
                  </button>
                  <button type="button" data-testid="queued-edit" aria-label={`Edit “${label}”`} disabled={waiting} onClick={() => void startEdit(q)}>
                    Edit
                  </button>
                  <button type="button" data-testid="queued-remove" aria-label={`Remove “${label}” from the queue`} disabled={waiting} onClick={() => leave(q, i, "queued-remove", "Removing", () => app.removeQueued(st.id, q.turnId))}>
                    Remove
                  </button>
                  <button type="button" data-testid="queued-send" aria-label={`Send “${label}” now`} title={sendTitle} disabled={waiting} onClick={() => leave(q, i, "queued-send", "Sending", () => app.sendQueued(st.id, q.turnId))}>
                    Send now
                  </button>
                </span>
              ) : null}
            </li>
          );
        })}
      </ol>
    </section>
  );
}
