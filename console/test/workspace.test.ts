// Unit tests of the workspace model: `turn.changes`, `workspace.restored` and `workspace.committed`
// as transcript items (after the turn's end, once each), turn numbers, and how changed files, the
// header's workspace and fork lineage, and the workspace errors read.
import assert from "node:assert/strict";
import { test } from "node:test";
import { changesSummary, childPath, countsText, diffKind, forkText, hasCheckpoints, shortSha, sizeText, statusText, workspaceText } from "../src/changes.js";
import { parseDiff, diffStats } from "../src/diff.js";
import { RoomModel } from "../src/model.js";
import { errorText } from "../src/present.js";
import { ev, resetSeq, session } from "./fixtures.js";



const files = [
  { path: "notes.md", status: "added", added: 1, removed: 0 },
  { path: "src/lib.rs", status: "modified", added: 3, removed: 2 },
  { path: "logo.png", status: "added", added: 0, removed: 0, binary: true },
] as const;

test("model: a turn's changes follow its end; restore and commit are lines of their own", () => {
  resetSeq();
  const room = new RoomModel("r", true);
  room.onHello({ type: "hello", roomId: "r", headSeq: 0, sessions: [], sides: [], sessionsTruncated: false });
  room.onEvent(ev("s1", "session.started", { session: session("s1", { workspace: { kind: "dir", checkpoints: true, repo: "/w" } }) }));
  for (const t of ["t1", "t2"]) {
    room.onEvent(ev("s1", "turn.started", { turnId: t, origin: "user", input: [{ type: "text", text: `/write ${t}.md x` }] }, t));
    room.onEvent(ev("s1", "turn.completed", { turnId: t }, t));
    room.onEvent(ev("s1", "turn.changes", { turnId: t, before: `cp-${t}-b`, after: `cp-${t}-a`, files: t === "t1" ? files : [] }, t));
  }
  const st = room.session("s1")!;
  const kinds = st.transcript.items.map((i) => i.kind);
  assert.deepEqual(kinds, ["info", "turn", "changes", "turn", "changes"]);
  const c1 = st.transcript.get("changes:t1");
  assert.ok(c1?.kind === "changes");
  assert.equal(c1.before, "cp-t1-b");
  assert.equal(c1.after, "cp-t1-a");
  assert.deepEqual(c1.files.map((f) => f.path), ["notes.md", "src/lib.rs", "logo.png"]);
  assert.deepEqual(c1.skipped, []);
  const c2 = st.transcript.get("changes:t2");
  assert.ok(c2?.kind === "changes" && c2.files.length === 0);
  // The same event replayed (a reconnect's overlap) is not a second block.
  room.onEvent(ev("s1", "turn.changes", { turnId: "t1", before: "cp-t1-b", after: "cp-t1-a", files, skipped: ["big.bin"] }, "t1"));
  assert.equal(st.transcript.items.filter((i) => i.kind === "changes").length, 2);
  assert.equal(st.transcript.turnNumber("t2"), 2);
  assert.equal(st.transcript.turnNumber("nope"), null);

  room.onEvent(ev("s1", "workspace.restored", { checkpoint: "cp-t1-b", undo: "cp-undo" }));
  room.onEvent(ev("s1", "workspace.restored", { checkpoint: "cp-undo", undo: "cp-undo2" }));
  const restored = st.transcript.items.filter((i) => i.kind === "restored");
  assert.equal(restored.length, 2, "two restores are two lines");
  assert.ok(restored[0]?.kind === "restored" && restored[0].undo === "cp-undo" && restored[0].checkpoint === "cp-t1-b");
  room.onEvent(ev("s1", "workspace.committed", { commit: "0123456789abcdef0123", branch: "ensemble/r/s1", message: "notes\n\nbody" }));
  const last = st.transcript.items[st.transcript.items.length - 1];
  assert.ok(last?.kind === "committed" && last.branch === "ensemble/r/s1" && last.commit === "0123456789abcdef0123");
  // Live-only rooms keep no transcript.
  const light = new RoomModel("r", false);
  light.onEvent(ev("s1", "session.started", { session: session("s1") }));
  light.onEvent(ev("s1", "turn.changes", { turnId: "t1", before: "a", after: "b", files }, "t1"));
  assert.equal(light.session("s1")!.transcript.items.length, 0);
});

test("changes: statuses, counts, summary, diff kinds", () => {
  assert.equal(statusText(files[0]), "added");
  assert.equal(statusText({ path: "b", oldPath: "a", status: "renamed", added: 0, removed: 0 }), "renamed from a");
  assert.equal(statusText({ path: "b", status: "type_changed", added: 0, removed: 0 }), "type changed");
  assert.equal(countsText(files[1]), "+3 −2");
  assert.equal(countsText(files[2]), "binary");
  assert.equal(changesSummary([...files]), "3 files · +4 −2 · 1 binary");
  assert.equal(changesSummary([files[0]]), "1 file · +1 −0");
  assert.equal(changesSummary([]), "no changes");
  assert.equal(diffKind("added"), "add");
  assert.equal(diffKind("deleted"), "delete");
  assert.equal(diffKind("renamed"), "update");
  // git's diff of one added file parses with its header lines as meta and the line as added.
  const rows = parseDiff("diff --git a/notes.md b/notes.md\nnew file mode 100644\nindex 0000000..ce01362\n--- /dev/null\n+++ b/notes.md\n@@ -0,0 +1 @@\n+hello\n", diffKind("added"));
  assert.deepEqual(diffStats(rows), { added: 1, removed: 0 });
  assert.deepEqual(rows.filter((r) => r.kind === "add").map((r) => [r.text, r.new]), [["hello", 1]]);
});

test("changes: the header's workspace and fork lineage", () => {
  assert.equal(shortSha("0123456789abcdef"), "0123456");
  assert.equal(shortSha("HEAD"), "HEAD");
  assert.equal(workspaceText(null), null);
  assert.equal(workspaceText({ kind: "dir", checkpoints: false }), null);
  assert.equal(workspaceText({ kind: "dir", checkpoints: true, repo: "/w/repo" }), "checkpoints around every turn in /w/repo");
  assert.equal(workspaceText({ kind: "worktree", checkpoints: true, repo: "/w/repo", branch: "ensemble/r/s1", baseCommit: "abcdef0123456789" }), "worktree of /w/repo on branch ensemble/r/s1 from abcdef0");
  assert.equal(hasCheckpoints({ kind: "dir", checkpoints: false }), false);
  assert.equal(hasCheckpoints({ kind: "worktree", checkpoints: true }), true);
  assert.equal(hasCheckpoints(undefined), false);
  const f = { sessionId: "s1", turnId: "turn-abc", checkpoint: "cp" };
  assert.equal(forkText(f, "Refactor", 2), "forked from Refactor at turn 2");
  assert.equal(forkText(f, null, null), "forked from s1 at turn turn-abc");
  assert.equal(sizeText(812), "812 B");
  assert.equal(sizeText(4300), "4.2 KiB");
  assert.equal(childPath("", "a"), "a");
  assert.equal(childPath("src/", "lib.rs"), "src/lib.rs");
});

test("errors: a branch that exists is named; the workspace roots are listed", () => {
  assert.equal(errorText(409, "branch_exists", "the branch exists", { branch: "feat/x" }), "the branch exists: branch feat/x exists already; name another one (409 branch_exists)");
  assert.equal(errorText(409, "branch_exists", "branch feat/x exists", { branch: "feat/x" }), "branch feat/x exists (409 branch_exists)");
  assert.match(errorText(400, "cwd_outside_workspace", "the repository is outside the workspace roots", { workspaceRoots: ["/w"] }), /allowed are \/w/);
  assert.equal(errorText(400, "not_a_git_repo", "/w/x is not in a git repository", null), "/w/x is not in a git repository (400 not_a_git_repo)");
});
