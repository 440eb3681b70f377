// The scrolling transcript of a session or a side conversation: what its items may do (answer,
// images, the workspace's diffs, restore and fork), and it keeps to the bottom while new items come
// unless scrolled up.

import { useLayoutEffect, useMemo, useRef } from "preact/hooks";
import type { App } from "../app.js";
import type { SessionState } from "../model.js";
import { hasCheckpoints } from "../changes.js";
import { TranscriptItems, type ItemContext } from "./items.js";

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
      {st.transcript.items.length ? <TranscriptItems transcript={st.transcript} ctx={ctx} /> : <p class="dim">Nothing yet.</p>}
    </div>
  );
}
