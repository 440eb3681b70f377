// Unit tests of a session drawn from its tail: the open room is live from its head, a session
// known from the hello is drawn from its present and a page of its latest events, live events
// that came meanwhile are neither lost nor drawn twice, and older pages go above without a turn
// cut in half.
import assert from "node:assert/strict";
import { test } from "node:test";
import { RoomModel, type Event, type SessionPresent } from "../src/model.js";
import { ev, resetSeq, session } from "./fixtures.js";

/** A whole turn of `s`: its start, a message, its end. */
function turn(s: string, id: string, text: string): Event[] {
  return [
    ev(s, "turn.started", { turnId: id, origin: "user", input: [{ type: "text", text }] }, id),
    ev(s, "message.completed", { itemId: "m1", text: `reply to ${text}` }, id),
    ev(s, "turn.completed", { turnId: id }, id),
  ];
}

const hello = (headSeq: number) =>
  ({ type: "hello", headSeq, sessions: [session("s1", { title: "old" })], sides: [], sessionsTruncated: false, role: "admin" }) as never;

function present(headSeq: number, extra: Partial<SessionPresent> = {}): SessionPresent {
  return {
    session: session("s1", { status: "waiting", updatedAtMs: 9 }),
    pending: [{ sessionId: "s1", turnId: "t9", requestedAtMs: 5, requestId: "q1", kind: "question", title: "Which?", options: ["accept"] } as never],
    usage: { totals: {}, turns: [], provider: "scripted", state: { exhausted: false } } as never,
    open: [],
    queue: [],
    commands: [{ name: "review", description: "Review the changes" }] as never,
    headSeq,
    ...extra,
  };
}

test("tail: a session known from the hello is drawn from its present and its latest turns, live events kept meanwhile", () => {
  resetSeq();
  const history = [ev("s1", "session.started", { session: session("s1") }), ...turn("s1", "t1", "one"), ...turn("s1", "t2", "two"), ...turn("s1", "t3", "three")];
  const room = new RoomModel("r", true);
  room.onHello(hello(history.length));
  const st = room.session("s1")!;
  assert.equal(st.logState, "none");
  // Not being drawn, a live event is its state's only.
  const early = ev("s1", "session.updated", { reason: "renamed", session: session("s1", { title: "early", updatedAtMs: 2 }) });
  room.onEvent(early);
  assert.equal(st.transcript.items.length, 0);
  assert.equal(st.log.length, 0);

  st.logState = "loading";
  // While its present and tail are read, live events come: kept, not drawn yet.
  const live = turn("s1", "t4", "four");
  for (const e of live) room.onEvent(e);
  assert.equal(st.transcript.items.length, 0);
  st.fromPresent(present(early.seq));
  // The present is older than the live events: those are applied over it.
  assert.equal(st.session.title, "New session");
  assert.equal(st.pending.size, 1);
  assert.deepEqual(st.commands.map((c) => c.name), ["review"]);
  assert.equal(st.activeTurnId, null, "t4 ended after the present was read");

  // The tail's page (the newest two turns of history and the rename), overlapping nothing twice.
  const page = [...history.slice(4), early];
  st.addPage(page, history[4]!.seq);
  assert.equal(st.logState, "ready");
  const turns = st.transcript.items.filter((i) => i.kind === "turn").map((i) => (i.kind === "turn" ? i.text : ""));
  assert.deepEqual(turns, ["two", "three", "four"], "whole turns only: t1's end is not shown without its start");
  assert.equal(new Set(st.log.map((e) => e.seq)).size, st.log.length, "no event twice");
  assert.equal(st.transcript.turnNumber("t3"), null, "earlier turns are not loaded: no number");

  // Older turns above, and then the session's first event: numbered from 1.
  st.addPage(history.slice(0, 4), null);
  assert.deepEqual(
    st.transcript.items.filter((i) => i.kind === "turn").map((i) => (i.kind === "turn" ? i.text : "")),
    ["one", "two", "three", "four"],
  );
  assert.equal(st.transcript.turnNumber("t3"), 3);
  assert.equal(st.startPruned, false);

  // Live events after it are drawn at once.
  for (const e of turn("s1", "t5", "five")) room.onEvent(e);
  assert.equal(st.transcript.items.filter((i) => i.kind === "turn").length, 5);
});

test("tail: a session that starts while the room is open needs no reading; a reset reads again", () => {
  resetSeq();
  const room = new RoomModel("r", true);
  room.onHello({ ...(hello(0) as object), sessions: [] } as never);
  room.onEvent(ev("s2", "session.started", { session: session("s2") }));
  for (const e of turn("s2", "t1", "hi")) room.onEvent(e);
  const st = room.session("s2")!;
  assert.equal(st.logState, "ready");
  assert.equal(st.transcript.items.filter((i) => i.kind === "turn").length, 1);
  st.resetLog();
  assert.equal(st.logState, "none");
  assert.equal(st.transcript.items.length, 0);
});

test("tail: a session whose first events are gone says so", () => {
  resetSeq();
  const room = new RoomModel("r", true);
  room.onHello(hello(10));
  const st = room.session("s1")!;
  st.logState = "loading";
  st.addPage(turn("s1", "t7", "seven"), null);
  assert.equal(st.startPruned, true);
});
