// Unit tests of the console's pure parts: the Markdown parser (and what it refuses to make a link),
// the highlighter, unified diffs, and the room model fed with fixture events (a file change with
// its diff, streaming, interactions, side conversations out of order, statuses).
import assert from "node:assert/strict";
import { test } from "node:test";
import { diffStats, parseDiff } from "../src/diff.js";
import { highlight } from "../src/highlight.js";
import { parseInline, parseMarkdown, safeHref, type Inline } from "../src/markdown.js";
import { itemKey, RoomModel, statusLabel, type Event } from "../src/model.js";
import { showControls } from "../src/text.js";
import { ev, resetSeq, session } from "./fixtures.js";

const text = (nodes: Inline[]): string =>
  nodes.map((n) => (n.t === "text" || n.t === "code" ? n.v : n.t === "br" ? "\n" : text(n.c))).join("");

test("markdown: blocks", () => {
  const md = "# Title\n\nSome **bold**, *em*, ~~del~~ and `code`.\nNext line\n\n- a\n- b\n  - nested\n1. one\n2. two\n\n> quoted\n\n---\n\n| a | b |\n|---|--:|\n| 1 | 2 |\n\n- [x] done\n- [ ] todo";
  const blocks = parseMarkdown(md);
  assert.deepEqual(
    blocks.map((b) => b.t),
    ["h", "p", "list", "list", "quote", "hr", "table", "list"],
  );
  const p = blocks[1];
  assert.ok(p?.t === "p");
  assert.deepEqual(
    p.c.map((n) => n.t),
    ["text", "strong", "text", "em", "text", "del", "text", "code", "text", "br", "text"],
  );
  const list = blocks[2];
  assert.ok(list?.t === "list" && !list.ordered);
  assert.equal(list.items.length, 2);
  assert.deepEqual(list.items[1]?.c.map((b) => b.t), ["p", "list"]);
  const table = blocks[6];
  assert.ok(table?.t === "table");
  assert.deepEqual(table.align, [null, "right"]);
  assert.equal(text(table.rows[0]?.[1] ?? []), "2");
  const tasks = blocks[7];
  assert.ok(tasks?.t === "list");
  assert.deepEqual(tasks.items.map((i) => i.task), [true, false]);
});

test("markdown: fenced code, also unclosed while it streams", () => {
  const [code] = parseMarkdown("```ts\nconst x = 1;\n```");
  assert.deepEqual(code, { t: "code", lang: "ts", v: "const x = 1;", open: false });
  const [open] = parseMarkdown("```python\ndef f():\n    return 1");
  assert.deepEqual(open, { t: "code", lang: "python", v: "def f():\n    return 1", open: true });
});

test("markdown: markup in messages stays text, links only for http(s) and mailto", () => {
  const nodes = parseInline('<img src=x onerror="alert(1)"> <script>alert(1)</script>');
  assert.deepEqual(nodes, [{ t: "text", v: '<img src=x onerror="alert(1)"> <script>alert(1)</script>' }]);
  for (const bad of ["javascript:alert(1)", "JaVaScRiPt:alert(1)", "java\tscript:alert(1)", " javascript:alert(1)", "data:text/html,<b>x</b>", "vbscript:x", "//evil.example/x", "/v1/rooms"]) {
    const [link] = parseInline(`[click](${bad.replace(/ /g, "")})`);
    assert.ok(link?.t !== "link" || link.href === null, `${bad} became a link: ${JSON.stringify(link)}`);
    assert.equal(safeHref(bad), null, bad);
  }
  const [ok] = parseInline("[docs](https://example.com/a_(b))");
  assert.deepEqual(ok, { t: "link", href: "https://example.com/a_(b)", c: [{ t: "text", v: "docs" }] });
  const bare = parseInline("see https://example.com/x.");
  assert.deepEqual(bare[1], { t: "link", href: "https://example.com/x", c: [{ t: "text", v: "https://example.com/x" }] });
  assert.equal(text(parseInline("snake_case_name and 2 * 3 * 4")), "snake_case_name and 2 * 3 * 4");
  assert.equal(text(parseInline("\\*not em\\*")), "*not em*");
});

test("markdown: any input parses (no throw, text preserved in order)", () => {
  const samples = ["", "*", "**", "[", "[a](", "`", "```", "> > >", "- ", "1.", "|a|\n|-|", "***bold em***", "_a_b_", "~~", "\\", "[a]", "<http://x", "h http://"];
  for (const s of samples) parseMarkdown(s);
  let seed = 7;
  const chars = "*_`~[]()<>|#-> \n\\abchttps:/";
  for (let n = 0; n < 500; n++) {
    let s = "";
    for (let k = 0; k < 30; k++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      s += chars[seed % chars.length];
    }
    parseMarkdown(s);
  }
});

test("highlight: tokens concatenate back to the code; keywords, strings, comments, numbers", () => {
  const code = 'const x = "a // not a comment"; // comment\nlet n = 42;';
  const toks = highlight(code, "ts");
  assert.equal(toks.map((t) => t.v).join(""), code);
  const kinds = (k: string) => toks.filter((t) => t.k === k).map((t) => t.v);
  assert.deepEqual(kinds("k"), ["const", "let"]);
  assert.deepEqual(kinds("s"), ['"a // not a comment"']);
  assert.deepEqual(kinds("c"), ["// comment"]);
  assert.deepEqual(kinds("n"), ["42"]);
  const py = highlight("def f():\n    # hi\n    return 'x'", "py");
  assert.deepEqual(py.filter((t) => t.k === "k").map((t) => t.v), ["def", "return"]);
  assert.deepEqual(highlight("plain text", ""), [{ k: "p", v: "plain text" }]);
});

test("diff: a unified diff keeps hunks and line numbers; whole files for add and delete", () => {
  const diff = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,4 @@\n fn main() {\n-    old();\n+    new();\n+    more();\n }\n";
  const rows = parseDiff(diff, "update");
  assert.deepEqual(
    rows.map((r) => [r.kind, r.old, r.new, r.text]),
    [
      ["meta", null, null, "--- a/src/lib.rs"],
      ["meta", null, null, "+++ b/src/lib.rs"],
      ["hunk", null, null, "@@ -1,3 +1,4 @@"],
      ["ctx", 1, 1, "fn main() {"],
      ["del", 2, null, "    old();"],
      ["add", null, 2, "    new();"],
      ["add", null, 3, "    more();"],
      ["ctx", 3, 4, "}"],
    ],
  );
  assert.deepEqual(diffStats(rows), { added: 2, removed: 1 });
  assert.deepEqual(parseDiff("a\nb\n", "add").map((r) => [r.kind, r.new]), [["add", 1], ["add", 2]]);
  assert.deepEqual(parseDiff("a\n", "delete").map((r) => [r.kind, r.old]), [["del", 1]]);
  assert.deepEqual(parseDiff("", "update"), []);
});

// ---- the room model, fed with fixture events ----



test("model: a turn with a streamed message, a command with output, and a file change with its diff", () => {
  resetSeq();
  const room = new RoomModel("r", true);
  room.onHello({ type: "hello", roomId: "r", headSeq: 0, sessions: [], sides: [], sessionsTruncated: false });
  room.onEvent(ev("s1", "session.started", { session: session("s1") }));
  room.onEvent(ev("s1", "turn.started", { turnId: "t1", origin: "user", input: [{ type: "text", text: "fix it" }] }, "t1"));
  const st = room.session("s1")!;
  assert.equal(st.status, "working");
  room.onEvent(ev("s1", "message.delta", { itemId: "m1", text: "Fixing " }, "t1"));
  room.onEvent(ev("s1", "message.delta", { itemId: "m1", text: "now" }, "t1"));
  const msg = st.transcript.get(itemKey("message", "t1", "m1"));
  assert.ok(msg?.kind === "message");
  assert.equal(msg.text, "Fixing now");
  assert.equal(msg.done, false);
  room.onEvent(ev("s1", "call.started", { callId: "c1", kind: "command", name: "shell", command: "cargo test", cwd: "/w" }, "t1"));
  room.onEvent(ev("s1", "call.updated", { callId: "c1", outputDelta: "running 1 test\n" }, "t1"));
  room.onEvent(ev("s1", "call.updated", { callId: "c1", outputDelta: "ok\n" }, "t1"));
  room.onEvent(ev("s1", "call.completed", { callId: "c1", status: "completed", exitCode: 0 }, "t1"));
  const cmd = st.transcript.get(itemKey("call", "t1", "c1"));
  assert.ok(cmd?.kind === "call");
  assert.equal(cmd.output, "running 1 test\nok\n");
  assert.equal(cmd.exitCode, 0);
  const changes = [{ path: "src/lib.rs", kind: "update", diff: "@@ -1 +1 @@\n-old\n+new\n" }, { path: "NEW.md", kind: "add", diff: "# New\n" }];
  room.onEvent(ev("s1", "call.started", { callId: "c2", kind: "fileChange", name: "apply_patch", changes: [] }, "t1"));
  room.onEvent(ev("s1", "call.completed", { callId: "c2", status: "completed", changes }, "t1"));
  const patch = st.transcript.get(itemKey("call", "t1", "c2"));
  assert.ok(patch?.kind === "call");
  assert.deepEqual(patch.changes, changes);
  assert.deepEqual(parseDiff(patch.changes[0]!.diff!, "update").filter((r) => r.kind !== "hunk").map((r) => [r.kind, r.text]), [["del", "old"], ["add", "new"]]);
  room.onEvent(ev("s1", "message.completed", { itemId: "m1", text: "Fixing now." }, "t1"));
  room.onEvent(ev("s1", "plan.updated", { steps: [{ step: "a", status: "completed" }] }, "t1"));
  room.onEvent(ev("s1", "plan.updated", { steps: [{ step: "a", status: "completed" }, { step: "b", status: "inProgress" }] }, "t1"));
  room.onEvent(ev("s1", "usage.updated", { inputTokens: 1, outputTokens: 2, totalTokens: 3 }, "t1"));
  room.onEvent(ev("s1", "turn.completed", { turnId: "t1" }, "t1"));
  assert.equal(st.status, "ready");
  assert.deepEqual(
    st.transcript.items.map((i) => i.kind),
    ["info", "turn", "message", "call", "call", "plan", "usage"],
  );
  const plan = st.transcript.items.find((i) => i.kind === "plan");
  assert.ok(plan?.kind === "plan" && plan.steps.length === 2, "a plan is updated in place");
});

test("model: interactions make a session wait; a goal continuation turn is remembered", () => {
  resetSeq();
  const room = new RoomModel("r", true);
  room.onEvent(ev("s1", "session.started", { session: session("s1") }));
  room.onEvent(ev("s1", "turn.started", { turnId: "t1", origin: "user", input: [{ type: "text", text: "/run ls" }] }, "t1"));
  room.onEvent(ev("s1", "interaction.requested", { requestId: "q1", kind: "commandApproval", title: "Run?", options: ["accept", "decline"] }, "t1"));
  const st = room.session("s1")!;
  assert.equal(st.status, "waiting");
  room.onEvent(ev("s1", "interaction.resolved", { requestId: "q1", decision: "accept", resolvedBy: "client" }, "t1"));
  assert.equal(st.status, "working");
  const it = st.transcript.get(itemKey("interaction", "t1", "q1"));
  assert.ok(it?.kind === "interaction" && it.resolved?.decision === "accept");
  room.onEvent(ev("s1", "turn.completed", { turnId: "t1" }, "t1"));
  const goal = { objective: "o", status: "active", operationId: "op1", revision: 1, repairEpoch: 0, origin: "user", updatedAtMs: 5 };
  room.onEvent(ev("s1", "goal.updated", { goal }));
  room.onEvent(ev("s1", "turn.started", { turnId: "t2", origin: "goal_continuation", goalOperationId: "op1" }, "t2"));
  assert.deepEqual(st.autoTurns, [{ turnId: "t2", origin: "goal_continuation", goalOperationId: "op1" }]);
  assert.equal(st.goal?.operationId, "op1");
  room.onEvent(ev("s1", "goal.cleared", { operationId: "op2", revision: 2, repairEpoch: 0 }));
  assert.equal(st.goal, null);
});

test("model: an item id that comes again in a later turn (a new provider process) is a new item", () => {
  resetSeq();
  const room = new RoomModel("r", true);
  room.onEvent(ev("s1", "session.started", { session: session("s1") }));
  for (const [turn, text] of [["t1", "before"], ["t2", "after"]] as const) {
    room.onEvent(ev("s1", "turn.started", { turnId: turn, origin: "user", input: [{ type: "text", text }] }, turn));
    room.onEvent(ev("s1", "message.delta", { itemId: "msg-1", text: "You said: " }, turn));
    room.onEvent(ev("s1", "message.completed", { itemId: "msg-1", text: `You said: ${text}` }, turn));
    room.onEvent(ev("s1", "call.started", { callId: "call-1", kind: "tool", name: text }, turn));
    room.onEvent(ev("s1", "call.completed", { callId: "call-1", status: "completed" }, turn));
    room.onEvent(ev("s1", "turn.completed", { turnId: turn }, turn));
  }
  const items = room.session("s1")!.transcript.items;
  assert.deepEqual(
    items.filter((i) => i.kind === "message").map((i) => (i.kind === "message" ? i.text : "")),
    ["You said: before", "You said: after"],
  );
  assert.deepEqual(items.filter((i) => i.kind === "call").map((i) => (i.kind === "call" ? [i.name, i.status] : [])), [["before", "completed"], ["after", "completed"]]);
});

test("model: a hello's snapshots win over older ones replayed after it", () => {
  resetSeq();
  const room = new RoomModel("r", true);
  room.onHello({ type: "hello", roomId: "r", headSeq: 2, sessions: [session("s1", { status: "disconnected", live: false, updatedAtMs: 50 })], sides: [], sessionsTruncated: false });
  room.onEvent(ev("s1", "session.started", { session: session("s1", { updatedAtMs: 10 }) }));
  room.onEvent(ev("s1", "session.updated", { session: session("s1", { status: "disconnected", live: false, updatedAtMs: 50 }), reason: "server_restart" }));
  assert.equal(room.session("s1")?.status, "disconnected");
  assert.equal(room.canonical.length, 1);
});

test("model: side events apply once, in their own seq order, and a gap is reported", () => {
  resetSeq();
  const room = new RoomModel("r", true);
  const side = session("s1-side", { scope: "side", sourceSessionId: "s1" });
  const sideEv = (n: number, type: string, payload: unknown): Event => ({ ...ev("s1-side", type, payload), seq: n, scope: "side" }) as Event;
  assert.equal(room.onSideEvent(sideEv(1, "session.started", { session: side })), false);
  // 3 before 2: waits; the gap is reported.
  assert.equal(room.onSideEvent(sideEv(3, "message.delta", { itemId: "m", text: "b" })), true);
  assert.equal(room.onSideEvent(sideEv(2, "message.delta", { itemId: "m", text: "a" })), false);
  // A repeat (e.g. a REST replay overlapping live frames) is dropped.
  assert.equal(room.onSideEvent(sideEv(2, "message.delta", { itemId: "m", text: "a" })), false);
  const st = room.session("s1-side")!;
  const m = st.transcript.get(itemKey("message", undefined, "m"));
  assert.ok(m?.kind === "message");
  assert.equal(m.text, "ab");
  assert.equal(st.sideSeq, 3);
  assert.deepEqual(room.sidesOf("s1").map((s) => s.id), ["s1-side"]);
  // A later hello that no longer lists it: it ended.
  room.onHello({ type: "hello", roomId: "r", headSeq: 0, sessions: [], sides: [], sessionsTruncated: false });
  assert.deepEqual(room.sidesOf("s1"), []);
});

test("model: every session status reaches its badge (failed too, which no provider produces today)", () => {
  resetSeq();
  const room = new RoomModel("r", false);
  const statuses = ["starting", "ready", "working", "waiting", "disconnected", "failed", "completed"] as const;
  room.onHello({
    type: "hello",
    roomId: "r",
    headSeq: 0,
    sessions: statuses.map((st, i) => session(`s${i}`, { status: st, activeTurnId: st === "working" ? "t" : null })),
    sides: [],
    sessionsTruncated: false,
  });
  assert.deepEqual(room.canonical.map((s) => s.status), [...statuses]);
  assert.deepEqual(statuses.map(statusLabel), ["starting", "ready", "working", "waiting for you", "disconnected", "failed", "closed"]);
});

test("text: bidirectional controls are shown, not obeyed", () => {
  assert.equal(showControls("report\u202Etxt.exe"), "report⟦U+202E⟧txt.exe");
  assert.equal(showControls("a\u2066b\u2069c\u200Fd\u061C"), "a⟦U+2066⟧b⟦U+2069⟧c⟦U+200F⟧d⟦U+061C⟧");
  assert.equal(showControls("plain שלום مرحبا"), "plain שלום مرحبا", "right-to-left text itself is left alone");
});
