// Unit tests of how the console shows an agent's text that is not prose: a right-to-left override
// (U+202E) or an isolate in a command, a tool's name or arguments, a question, a plan, a model, a
// goal or a mode's name is shown as a visible mark, never acted on; what is not a control stays.
import assert from "node:assert/strict";
import { test } from "node:test";
import { RoomModel } from "../src/model.js";
import { approvalCommand, callHead, modelText, planText, questionText, shown } from "../src/shown.js";
import { ev, resetSeq, session } from "./fixtures.js";

const RLO = "\u202E";

test("shown: the approval card's command and cwd show their controls", () => {
  // `sh ./invoice<RLO>fdp.sh` would read `sh ./invoicehs.pdf`.
  assert.deepEqual(approvalCommand({ command: `sh ./invoice${RLO}fdp.sh`, cwd: `/w/a\u2067b` }), {
    line: "$ sh ./invoice⟦U+202E⟧fdp.sh",
    cwd: "\n# in /w/a⟦U+2067⟧b",
  });
  assert.deepEqual(approvalCommand({ command: "ls -la", cwd: null }), { line: "$ ls -la", cwd: null });
  assert.equal(approvalCommand({ command: null }), null);
});

test("shown: a call's command, tool name, arguments, cwd and output show their controls", () => {
  const command = callHead({ command: `cat notes${RLO}txt.sh`, name: `Bash${RLO}x`, input: { a: 1 }, cwd: `/w/${RLO}d`, output: `x${RLO}y\n` });
  assert.deepEqual(command, { title: "cat notes⟦U+202E⟧txt.sh", tool: "Bash⟦U+202E⟧x", args: null, cwd: "/w/⟦U+202E⟧d", output: "x⟦U+202E⟧y\n" });
  const tool = callHead({ command: null, name: `read${RLO}_file`, input: { path: `a${RLO}b.txt`, n: 2 }, cwd: null, output: "" });
  assert.deepEqual(tool, { title: "read⟦U+202E⟧_file", tool: null, args: '{"path":"a⟦U+202E⟧b.txt","n":2}', cwd: null, output: "" });
  assert.equal(callHead({ command: null, name: "t", input: {}, cwd: null, output: "" }).args, null, "no arguments, nothing shown");
});

test("shown: questions, plans, models and descriptions show their controls; plain text is left alone", () => {
  assert.deepEqual(questionText({ header: `Pay${RLO}`, question: `Send to ${RLO}evil?` }), { header: "Pay⟦U+202E⟧: ", question: "Send to ⟦U+202E⟧evil?" });
  assert.deepEqual(questionText({ question: "Which colour?" }), { header: null, question: "Which colour?" });
  assert.deepEqual(planText({ explanation: `why${RLO}`, steps: [{ step: `rm -rf ${RLO}/`, status: "pending" }, { step: "build", status: "completed" }] }), {
    explanation: "why⟦U+202E⟧",
    steps: ["rm -rf ⟦U+202E⟧/", "build"],
  });
  assert.equal(modelText(`gpt${RLO}5`), " · model gpt⟦U+202E⟧5");
  assert.equal(modelText(null), "");
  assert.equal(shown(`a\u2066b\u2069`), "a⟦U+2066⟧b⟦U+2069⟧");
  assert.equal(shown(null), undefined);
  assert.equal(shown("שלום"), "שלום", "right-to-left text itself is left alone");
});

test("shown: a goal's objective and the agent's mode names in the transcript show their controls", () => {
  resetSeq();
  const room = new RoomModel("r", true);
  room.onEvent(ev("s1", "session.started", { session: session("s1") }));
  const goal = { objective: `ship ${RLO}it`, status: "active", operationId: "op1", revision: 1, repairEpoch: 0, origin: "user", updatedAtMs: 5 };
  room.onEvent(ev("s1", "goal.updated", { goal }));
  const modes = { current: "m", available: [{ id: "m", name: `auto${RLO}` }] };
  room.onEvent(ev("s1", "session.updated", { session: session("s1", { modes, updatedAtMs: 6 }), reason: "config" }));
  const infos = room.session("s1")!.transcript.items.flatMap((i) => (i.kind === "info" ? [i.text] : []));
  assert.ok(infos.includes("Goal active: ship ⟦U+202E⟧it"), JSON.stringify(infos));
  assert.ok(infos.includes("Settings changed (mode: auto⟦U+202E⟧)"), JSON.stringify(infos));
  assert.ok(!infos.some((t) => t.includes(RLO)), "no control reaches the transcript");
});
