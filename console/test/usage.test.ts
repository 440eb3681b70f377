// Unit tests of the burn and the budget: counts and costs as they read, a usage answer against its
// budget (the meter's share, near, reached), the burn rate from the transcript's times and the
// ledger's turns, the Budget… form's input, a 409 budget_exhausted's words, and `Latest` (a burst
// of events costs one request; an answer overtaken by a newer request is dropped).
import assert from "node:assert/strict";
import { test } from "node:test";
import { RoomModel } from "../src/model.js";
import { errorText } from "../src/present.js";
import {
  budgetOfDraft,
  burnRate,
  costText,
  countText,
  draftOf,
  exhaustedText,
  Latest,
  rateText,
  refreshesUsage,
  tokensOf,
  turnSpans,
  usageView,
  type Clock,
  type SessionUsage,
  type UsageTotals,
} from "../src/usage.js";
import { ev as event, resetSeq, session } from "./fixtures.js";

const totals = (input: number, output: number, cost?: { amount: number; currency: string }): UsageTotals => ({ inputTokens: input, cachedInputTokens: 0, outputTokens: output, reasoningOutputTokens: 0, ...(cost ? { cost } : {}) });

test("usage: counts with separators, costs in their currency with their first digits", () => {
  assert.equal(countText(0), "0");
  assert.equal(countText(999), "999");
  assert.equal(countText(1003), "1,003");
  assert.equal(countText(1234567), "1,234,567");
  assert.equal(countText(1234.6), "1,235");
  assert.equal(costText(1.5, "USD"), "$1.50");
  assert.equal(costText(0.5, "USD"), "$0.50");
  assert.equal(costText(0.0042, "USD"), "$0.0042");
  assert.equal(costText(0.004, "USD"), "$0.004");
  assert.equal(costText(0, "USD"), "$0.00");
  assert.equal(costText(12, "EUR"), "12.00 EUR");
  assert.equal(costText(3.25, "credits"), "3.25 credits");
  assert.equal(costText(2, null), "2.00");
  assert.equal(tokensOf(totals(10, 5)), 15);
});

test("usage: what was spent, with no budget", () => {
  const v = usageView({ totals: totals(3, 1000), state: { exhausted: false, tokens: 1003 } });
  assert.equal(v.text, "1,003 tokens");
  assert.equal(v.fraction, null);
  assert.equal(v.level, "ok");
  assert.equal(v.exhausted, false);
  assert.match(v.title, /No budget/);
  const one = usageView({ totals: totals(1, 0), state: { exhausted: false, tokens: 1 } });
  assert.equal(one.text, "1 token");
  const paid = usageView({ totals: totals(3, 1000, { amount: 0.5, currency: "USD" }), budget: null, state: { exhausted: false, tokens: 1003, cost: 0.5 } });
  assert.equal(paid.text, "1,003 tokens · $0.50");
});

test("usage: against a budget, X of Y tokens (and cost) with the meter's share; near; reached", () => {
  const half = usageView({ totals: totals(0, 1000), budget: { maxTokens: 2000, onExhausted: "finish" }, state: { exhausted: false, tokens: 1000 } });
  assert.equal(half.text, "1,000 of 2,000 tokens");
  assert.equal(half.fraction, 0.5);
  assert.equal(half.level, "ok");
  assert.match(half.title, /^Budget: 2,000 tokens\. Once it is reached the running turn finishes/);

  const both = usageView({ totals: totals(0, 900, { amount: 4.5, currency: "USD" }), budget: { maxTokens: 10000, maxCost: 5, onExhausted: "cancel" }, state: { exhausted: false, tokens: 900, cost: 4.5 } });
  assert.equal(both.text, "900 of 10,000 tokens · $4.50 of $5.00");
  assert.equal(both.fraction, 0.9, "the larger share: the cost's");
  assert.equal(both.level, "near");
  assert.match(both.title, /^Budget: 10,000 tokens and \$5\.00\. Once it is reached the running turn is canceled/);

  // A cost limit before the agent reported any cost: nothing spent of it yet.
  const costOnly = usageView({ totals: totals(0, 10), budget: { maxCost: 2 }, state: { exhausted: false, tokens: 10 } });
  assert.equal(costOnly.text, "10 tokens · 0.00 of 2.00");
  assert.equal(costOnly.fraction, 0);

  const over = usageView({ totals: totals(3, 2100), budget: { maxTokens: 2000 }, state: { exhausted: true, tokens: 2103 } });
  assert.equal(over.text, "2,103 of 2,000 tokens");
  assert.equal(over.fraction, 1, "capped");
  assert.equal(over.level, "exhausted");
  assert.equal(over.exhausted, true);

  // The server says reached (the room's, a cost the tokens do not show): the meter is full.
  const said = usageView({ totals: totals(0, 10), budget: { maxTokens: 2000 }, state: { exhausted: true, tokens: 10 } });
  assert.equal(said.fraction, 1);
  assert.equal(said.level, "exhausted");

  // A budget without a limit (`{}`) limits nothing.
  const open = usageView({ totals: totals(0, 10), budget: {}, state: { exhausted: false, tokens: 10 } });
  assert.equal(open.fraction, null);
  assert.equal(open.text, "10 tokens");
});

/** An event of session s1 at `at`. */
const ev = (type: string, payload: unknown, at: number, turnId?: string) => event("s1", type, payload, turnId, { occurredAtMs: at });
const usage = (total: number) => ({ inputTokens: 0, outputTokens: total, totalTokens: total });

test("usage: the burn rate over the recent turns, from their start to their last usage report", () => {
  resetSeq();
  const room = new RoomModel("r", true);
  room.onEvent(ev("session.started", { session: session("s1") }, 0));
  // t1: 600 tokens in 30 s (two reports: the turn's last counts); t2: 900 in 60 s, an hour later; t3: no report.
  const turn = (id: string, start: number, reports: [number, number][]) => {
    room.onEvent(ev("turn.started", { turnId: id, origin: "user", input: [{ type: "text", text: "go" }] }, start, id));
    for (const [at, total] of reports) room.onEvent(ev("usage.updated", usage(total), at, id));
    room.onEvent(ev("turn.completed", { turnId: id }, (reports.at(-1)?.[0] ?? start) + 5, id));
  };
  turn("t1", 1_000, [
    [11_000, 100],
    [31_000, 600],
  ]);
  turn("t2", 3_600_000, [[3_660_000, 1500]]);
  turn("t3", 4_000_000, []);
  const items = room.session("s1")!.transcript.items;
  const ledger: SessionUsage["turns"] = [
    { turnId: "t0", usage: totals(0, 50) },
    { turnId: "t1", usage: totals(100, 500) },
    { turnId: "t2", usage: totals(0, 900) },
  ];
  const spans = turnSpans(items, ledger);
  assert.deepEqual(spans, [
    { turnId: "t1", tokens: 600, startedAtMs: 1_000, endedAtMs: 31_000 },
    { turnId: "t2", tokens: 900, startedAtMs: 3_600_000, endedAtMs: 3_660_000 },
  ]);
  // 1,500 tokens in 90 s of work (the hour between the turns left out): 1,000 a minute.
  const r = burnRate(spans);
  assert.deepEqual(r, { perMinute: 1000, turns: 2 });
  assert.equal(rateText(r!), "≈ 1,000 tokens/min over the last 2 turns");
  assert.deepEqual(burnRate(spans, 1), { perMinute: 900, turns: 1 });
  assert.equal(rateText({ perMinute: 900, turns: 1 }), "≈ 900 tokens/min over the last turn");
  // Less than a second of work says nothing; no turns neither.
  assert.equal(burnRate([{ turnId: "x", tokens: 1000, startedAtMs: 0, endedAtMs: 40 }]), null);
  assert.equal(burnRate([]), null);
});

test("usage: the Budget… form, filled in from the budget and checked before it is sent", () => {
  assert.deepEqual(draftOf(null), { maxTokens: "", maxCost: "", onExhausted: "finish" });
  assert.deepEqual(draftOf({ maxTokens: 2000, maxCost: 1.5, onExhausted: "cancel" }), { maxTokens: "2000", maxCost: "1.5", onExhausted: "cancel" });
  assert.deepEqual(budgetOfDraft({ maxTokens: " 10,000 ", maxCost: "", onExhausted: "finish" }), { budget: { maxTokens: 10000, onExhausted: "finish" } });
  assert.deepEqual(budgetOfDraft({ maxTokens: "", maxCost: "$2.50", onExhausted: "cancel" }), { budget: { maxCost: 2.5, onExhausted: "cancel" } });
  assert.deepEqual(budgetOfDraft({ maxTokens: "500", maxCost: ".5", onExhausted: "finish" }), { budget: { maxTokens: 500, maxCost: 0.5, onExhausted: "finish" } });
  const error = (maxTokens: string, maxCost: string) => {
    const r = budgetOfDraft({ maxTokens, maxCost, onExhausted: "finish" });
    return "error" in r ? r.error : null;
  };
  assert.match(error("", "")!, /a token limit, a cost limit or both/);
  assert.match(error("0", "")!, /whole number of at least 1/);
  assert.match(error("1.5", "")!, /whole number/);
  assert.match(error("-3", "")!, /whole number/);
  assert.match(error("ten", "")!, /not “ten”/);
  assert.match(error("", "0")!, /above 0/);
  assert.match(error("", "-1")!, /above 0/);
  assert.match(error("", "abc")!, /above 0/);
  assert.match(error("99999999999999999999", "")!, /whole number/);
});

test("usage: a 409 budget_exhausted says where spending stands", () => {
  const message = "the session's budget is reached (raise it with PUT …/budget to go on)";
  const details = { scope: "session", budget: { maxTokens: 1000, onExhausted: "finish" }, state: { exhausted: true, tokens: 1004 } };
  assert.equal(exhaustedText(details), "this session has spent 1,004 of 1,000 tokens");
  // The console's words, not the API's: the Budget… button, never `PUT …/budget`.
  assert.equal(errorText(409, "budget_exhausted", message, details), "the session's budget is reached: this session has spent 1,004 of 1,000 tokens; raise it with Budget… (409 budget_exhausted)");
  const room = { scope: "room", budget: { maxTokens: 5000, maxCost: 2 }, state: { exhausted: true, tokens: 300, cost: 2.25 } };
  assert.equal(exhaustedText(room), "the room has spent 300 of 5,000 tokens and 2.25 of 2.00 in cost");
  assert.equal(errorText(409, "budget_exhausted", message, room), "the room's budget is reached: the room has spent 300 of 5,000 tokens and 2.25 of 2.00 in cost; raise it with Budget… (409 budget_exhausted)");
  // Without usable details: still no API words.
  assert.equal(exhaustedText(null), null);
  assert.equal(errorText(409, "budget_exhausted", message, null), "the session's budget is reached; raise it with Budget… (409 budget_exhausted)");
});

test("usage: the events after which usage is read again", () => {
  for (const t of ["usage.updated", "turn.completed", "turn.failed", "turn.canceled", "notice", "budget.exhausted"]) assert.ok(refreshesUsage(t), t);
  for (const t of ["message.delta", "turn.started", "queue.updated", "session.updated"]) assert.ok(!refreshesUsage(t), t);
});

/** A clock the test moves by hand. */
function fakeClock() {
  let now = 0;
  let next = 1;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const clock: Clock = {
    set: (fn, ms) => {
      const id = next++;
      timers.set(id, { at: now + ms, fn });
      return id;
    },
    clear: (h) => void timers.delete(h as number),
  };
  const advance = (ms: number) => {
    now += ms;
    for (const [id, t] of [...timers].sort((a, b) => a[1].at - b[1].at)) {
      if (t.at > now) continue;
      timers.delete(id);
      t.fn();
    }
  };
  return { clock, advance, pending: () => timers.size };
}

/** A promise settled by hand. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
const tick = () => new Promise((r) => setTimeout(r, 0));

test("usage: Latest reads once after a burst of events, and drops an answer a newer request overtook", async () => {
  const { clock, advance, pending } = fakeClock();
  const asked: ReturnType<typeof deferred<number>>[] = [];
  let changes = 0;
  const feed = new Latest<number>(
    () => {
      const d = deferred<number>();
      asked.push(d);
      return d.promise;
    },
    () => changes++,
    250,
    clock,
  );
  assert.equal(feed.value, null);
  // A burst (a replayed log, several reports in a turn): one request, 250 ms after the last.
  feed.soon();
  advance(200);
  feed.soon();
  advance(200);
  feed.soon();
  assert.equal(asked.length, 0);
  advance(250);
  assert.equal(asked.length, 1);
  assert.equal(pending(), 0);
  asked[0]!.resolve(1);
  await tick();
  assert.equal(feed.value, 1);
  assert.equal(changes, 1);

  // A GET still under way when a PUT answers: the PUT's answer stays, the GET's is dropped.
  void feed.now();
  const put = deferred<number>();
  const set = feed.run(() => put.promise);
  put.resolve(20);
  assert.equal(await set, 20);
  assert.equal(feed.value, 20);
  asked[1]!.resolve(2);
  await tick();
  assert.equal(feed.value, 20, "the older GET's answer is dropped");
  assert.equal(changes, 2);

  // Two GETs answering out of order: only the newer one's answer is taken.
  void feed.now();
  void feed.now();
  asked[3]!.resolve(4);
  await tick();
  asked[2]!.resolve(3);
  await tick();
  assert.equal(feed.value, 4);

  // A failed read keeps what is shown; a failed run rejects for its caller and changes nothing.
  void feed.now();
  asked[4]!.reject(new Error("gone"));
  await tick();
  assert.equal(feed.value, 4);
  await assert.rejects(feed.run(() => Promise.reject(new Error("409"))), /409/);
  assert.equal(feed.value, 4);
});
