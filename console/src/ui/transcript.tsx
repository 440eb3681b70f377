// The scrolling transcript of a session or a side conversation: what its items may do (answer,
// images, the workspace's diffs, restore and fork), and it keeps to the bottom while new items come
// unless scrolled up.

import { useLayoutEffect, useMemo, useRef } from "preact/hooks";
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
      <Inherited app={app} st={st} />
      {st.transcript.items.length ? <TranscriptItems transcript={st.transcript} ctx={ctx} /> : <p class="dim">Nothing yet.</p>}
    </div>
  );
}
