// The scrolling transcript of a session or a side conversation: what its items may do (answer,
// images, the workspace's diffs, restore and fork), and it keeps to the bottom while new items come
// unless scrolled up. A session's earlier turns are read as it is scrolled to its top (and stay in
// place: what was on screen does not jump).

import { useEffect, useLayoutEffect, useMemo, useRef } from "preact/hooks";
import type { App } from "../app.js";
import type { SessionState } from "../model.js";
import { hasCheckpoints } from "../changes.js";
import { TranscriptItems, type ItemContext } from "./items.js";
import { displayName } from "./sessionlabel.js";

/**
 * What a fork inherited: its source's transcript through the turn it was forked at, read-only and
 * marked as inherited, above its own (the fork's log starts at its own start).
 */
function Inherited({ app, st }: { app: App; st: SessionState }) {
  const from = st.isSide ? null : st.session.forkedFrom ?? null;
  const source = from ? app.room()?.session(from.sessionId) : undefined;
  // Read-only: answering, restoring and forking belong to the source's own view.
  const ctx: ItemContext = useMemo(
    () => ({
      answer: async () => {},
      attachment: (attachment) => app.attachment(source?.id ?? "", attachment),
      goalOperationId: null,
      claimFocus: () => false,
      canAnswer: false,
      myTokenId: app.me?.tokenId ?? null,
      workspace: null,
    }),
    [source?.id, app.me?.tokenId],
  );
  useEffect(() => app.ensureInherited(st));
  if (!from || !source) return null;
  const items = source.transcript.through(from.turnId);
  if (!items.length) return null;
  const n = source.transcript.turnNumber(from.turnId);
  return (
    <section class="inherited" data-testid="inherited" data-source={source.id} aria-label={`Inherited from ${displayName(source)}`}>
      <p class="inherited-head dim">
        Inherited from {displayName(source)}, through turn {n ?? "?"}
      </p>
      <TranscriptItems transcript={source.transcript} ctx={ctx} items={items} />
      <p class="fork-point dim" data-testid="fork-point">
        Forked here
      </p>
    </section>
  );
}

export function TranscriptView({ app, st, label }: { app: App; st: SessionState; label?: string }) {
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
  // The first item and the height it was drawn at: older turns added above it keep it in place.
  const top = useRef<{ key: string | null; height: number }>({ key: null, height: 0 });
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    const first = st.transcript.items[0]?.key ?? null;
    if (stick.current) el.scrollTop = el.scrollHeight;
    else if (top.current.key !== null && first !== top.current.key) el.scrollTop += el.scrollHeight - top.current.height;
    top.current = { key: first, height: el.scrollHeight };
  });
  const older = st.olderBefore !== null && st.logState === "ready";
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
        if (older && el.scrollTop < 200) void app.loadOlder(st);
      }}
    >
      {older ? (
        <p class="dim older" data-testid="older-turns">
          <button type="button" class="link" disabled={st.loadingOlder} onClick={() => void app.loadOlder(st)}>
            {st.loadingOlder ? "Reading earlier turns…" : "Earlier turns"}
          </button>
        </p>
      ) : st.startPruned ? (
        <p class="dim" data-testid="start-pruned">
          Earlier events of this session are no longer kept by the server.
        </p>
      ) : null}
      <Inherited app={app} st={st} />
      {st.transcript.items.length ? (
        <TranscriptItems transcript={st.transcript} ctx={ctx} />
      ) : st.logState === "loading" ? (
        <p class="dim">Reading the session…</p>
      ) : (
        <p class="dim">Nothing yet.</p>
      )}
    </div>
  );
}
