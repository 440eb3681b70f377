// Unit tests of what a new user reads: API errors with their details, usage lines, an ACP agent's
// permission text, side conversation names, and the transcript's order when an approval gates a call
// that was announced before it (codex).
import assert from "node:assert/strict";
import { test } from "node:test";
import { itemKey, RoomModel, type Event } from "../src/model.js";
import { errorText, permissionDetail, sideName, titleRepeatsQuestion, usageText } from "../src/present.js";
import { ev, resetSeq, session } from "./fixtures.js";



test("errors: the allowed workspace roots and a provider's login message are said", () => {
  const cwd = errorText(400, "cwd_outside_workspace", "cwd must be inside a workspace root", { workspaceRoots: ["/srv/work", "/home/me/src"] });
  assert.equal(cwd, "cwd must be inside a workspace root: allowed are /srv/work, /home/me/src and the directories below them (400 cwd_outside_workspace)");
  const auth = errorText(409, "auth_required", "codex needs a login", { authMessage: "codex is not logged in: run `codex login`.", loginCommand: "codex login" });
  assert.match(auth, /^the agent needs authentication before it can take a turn: codex is not logged in: run `codex login`\. To log in, run `codex login` where the server runs, then send again\. \(409 auth_required\)$/);
  // Without details: the message and the code, as before.
  assert.equal(errorText(404, "session_not_found", "no such session", null), "no such session (404 session_not_found)");
});

test("usage: an agent that reports only a total is not shown as 0 in and 0 out", () => {
  assert.equal(usageText({ inputTokens: 0, outputTokens: 0, totalTokens: 1234, contextWindow: 200000 }), "Tokens: 1234 (total only) · context window 200000");
  assert.equal(
    usageText({ inputTokens: 10, cachedInputTokens: 4, outputTokens: 5, reasoningOutputTokens: 2, totalTokens: 15, lastTurnTotalTokens: 15 }),
    "Tokens: 10 in (4 cached) · 5 out (2 reasoning) · 15 total · this turn 15",
  );
});

test("permissions: codex-acp's list of decisions is dropped, its reason kept", () => {
  const detail = "The agent wants to clean the build\nAvailable Decisions: Approved\nApprovedExecpolicyAmendment\nAbort";
  assert.equal(permissionDetail(detail), "The agent wants to clean the build");
  assert.equal(permissionDetail("Available Decisions: approved\ndenied"), null);
  assert.equal(permissionDetail("Proposed Amendment: rm\nAvailable Decisions: Approved\nAbort\nProposed Network Policy Amendments: Allow \"example.com\""), 'Proposed Amendment: rm\nProposed Network Policy Amendments: Allow "example.com"');
  assert.equal(permissionDetail(null), null);
  assert.equal(permissionDetail("nothing to drop"), "nothing to drop");
});

test("questions: a title that only repeats the question is recognised", () => {
  assert.ok(titleRepeatsQuestion("Which colour?", [{ question: "Which colour?" }]));
  assert.ok(titleRepeatsQuestion("Colour: which one?", [{ header: "Colour", question: "which one?" }]));
  assert.ok(!titleRepeatsQuestion("Two questions", [{ question: "Which colour?" }, { question: "Which size?" }]));
});

test("side conversations: their own title, else a number and the first words of their first question", () => {
  const room = new RoomModel("r", true);
  room.onSnapshots([session("s1"), session("side-b", { scope: "side", sourceSessionId: "s1", title: "Side conversation", createdAtMs: 20 }), session("side-a", { scope: "side", sourceSessionId: "s1", title: "Side conversation", createdAtMs: 10 })]);
  const a = room.session("side-a")!;
  const b = room.session("side-b")!;
  assert.equal(sideName(room, a), "Side conversation 1");
  assert.equal(sideName(room, b), "Side conversation 2");
  room.onSideEvent({ ...ev("side-b", "turn.started", { turnId: "t9", origin: "user", input: [{ type: "text", text: "what does the parser do with tabs and other whitespace?" }] }, "t9"), seq: 1, scope: "side" } as Event);
  assert.equal(sideName(room, b), "Side conversation 2: what does the parser do with…");
  room.onSnapshots([session("side-a", { scope: "side", sourceSessionId: "s1", title: "Release notes", createdAtMs: 10, updatedAtMs: 5 })]);
  assert.equal(sideName(room, a), "Release notes");
});

test("transcript: a call announced before the approval that gates it reads after that approval", () => {
  resetSeq();
  const room = new RoomModel("r", true);
  room.onEvent(ev("c1", "session.started", { session: session("c1") }));
  room.onEvent(ev("c1", "turn.started", { turnId: "t1", origin: "user", input: [{ type: "text", text: "run it" }] }, "t1"));
  // codex: the command item first, then the request to run it.
  room.onEvent(ev("c1", "call.started", { callId: "x1", kind: "command", name: "shell", command: "touch a" }, "t1"));
  room.onEvent(ev("c1", "interaction.requested", { requestId: "rq1", kind: "commandApproval", title: "Run `touch a`?", options: ["accept", "decline"], callId: "x1", command: "touch a" }, "t1"));
  const tr = room.session("c1")!.transcript;
  const order = () => tr.items.map((i) => (i.kind === "call" ? `call:${i.callId}` : i.kind === "interaction" ? `ask:${i.request.requestId}` : i.kind));
  assert.deepEqual(order(), ["info", "turn", "ask:rq1", "call:x1"]);
  const call = tr.get(itemKey("call", "t1", "x1"))!;
  assert.equal(tr.awaitingApproval(call), true);
  room.onEvent(ev("c1", "interaction.resolved", { requestId: "rq1", decision: "accept", resolvedBy: "client" }, "t1"));
  assert.equal(tr.awaitingApproval(call), false);
  room.onEvent(ev("c1", "call.updated", { callId: "x1", outputDelta: "done\n" }, "t1"));
  room.onEvent(ev("c1", "call.completed", { callId: "x1", status: "completed", exitCode: 0 }, "t1"));
  room.onEvent(ev("c1", "message.completed", { itemId: "m1", text: "Ran it." }, "t1"));
  assert.deepEqual(order(), ["info", "turn", "ask:rq1", "call:x1", "message"]);

  // A call that already ran (it has output) stays where it is; so does one asked about first (scripted).
  room.onEvent(ev("c1", "call.started", { callId: "x2", kind: "command", name: "shell", command: "ls" }, "t1"));
  room.onEvent(ev("c1", "call.updated", { callId: "x2", outputDelta: "a\n" }, "t1"));
  room.onEvent(ev("c1", "interaction.requested", { requestId: "rq2", kind: "permissions", title: "More?", options: ["accept"], callId: "x2" }, "t1"));
  room.onEvent(ev("c1", "interaction.requested", { requestId: "rq3", kind: "commandApproval", title: "Run `make`?", options: ["accept"], callId: "x3" }, "t1"));
  room.onEvent(ev("c1", "call.started", { callId: "x3", kind: "command", name: "shell", command: "make" }, "t1"));
  assert.deepEqual(order().slice(-4), ["call:x2", "ask:rq2", "ask:rq3", "call:x3"]);
  // A replayed request (the same event again) moves nothing.
  room.onEvent(ev("c1", "interaction.requested", { requestId: "rq1", kind: "commandApproval", title: "Run `touch a`?", options: ["accept", "decline"], callId: "x1" }, "t1"));
  assert.deepEqual(order().slice(2, 4), ["ask:rq1", "call:x1"]);
});
