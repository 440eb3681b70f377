// Workspaces through @ensemble/client against the real binary: a worktree session, a turn's
// changes as a typed event and over REST, a commit on its branch and a restore.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

import { Collector, ok, roomId, type Server, startServer } from "./support.js";

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main", ...args], {
    cwd,
    env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null" },
    encoding: "utf8",
  });
}

describe("a worktree session through @ensemble/client", () => {
  let server: Server;
  let room: Collector;
  const roomName = roomId("workspace");
  const sessionId = "w1";
  const path = { roomId: roomName, sessionId };

  before(async () => {
    server = await startServer();
    room = new Collector(server.roomStream(roomName, { after: 0 }).stream);
  });

  after(async () => {
    room?.stream.close();
    await server?.stop();
  });

  it("changes, commits and restores", async () => {
    const repo = join(server.workDir, "ts-repo");
    mkdirSync(repo);
    git(repo, "init", "-q");
    writeFileSync(join(repo, "README.md"), "# demo\n");
    git(repo, "add", ".");
    git(repo, "commit", "-q", "-m", "first");

    const started = ok(
      await server.client.POST("/v1/rooms/{roomId}/sessions", {
        params: { path: { roomId: roomName } },
        body: { sessionId, workspace: { kind: "worktree", repo } },
      }),
      "start",
    );
    assert.equal(started.workspace?.kind, "worktree");
    assert.equal(started.workspace?.branch, `ensemble/${roomName}/${sessionId}`);
    const top = started.workspace?.path ?? "";

    const { turnId } = ok(
      await server.client.POST("/v1/rooms/{roomId}/sessions/{sessionId}/turns", {
        params: { path },
        body: { input: [{ type: "text", text: "/write notes.md from typescript" }] },
      }),
      "submit",
    );
    const changes = await room.event("turn.changes", (e) => e.turnId === turnId);
    assert.deepEqual(
      changes.payload.files.map((f) => [f.path, f.status]),
      [["notes.md", "added"]],
    );
    const review = ok(
      await server.client.GET("/v1/rooms/{roomId}/sessions/{sessionId}/changes", {
        params: { path, query: { turn: turnId } },
      }),
      "changes",
    );
    assert.ok(review.diff.includes("+from typescript"), review.diff);

    const info = ok(
      await server.client.GET("/v1/rooms/{roomId}/sessions/{sessionId}/workspace", { params: { path } }),
      "workspace",
    );
    assert.ok(info.diskBytes > 0);
    assert.equal(info.workspace.path, top);
    const listing = ok(
      await server.client.GET("/v1/rooms/{roomId}/sessions/{sessionId}/files", { params: { path, query: {} } }),
      "files",
    );
    assert.deepEqual(listing.entries.map((e) => e.name).sort(), ["README.md", "notes.md"]);
    const content = ok(
      await server.client.GET("/v1/rooms/{roomId}/sessions/{sessionId}/files/content", {
        params: { path, query: { path: "notes.md" } },
      }),
      "file",
    );
    assert.equal(content.content, "from typescript\n");
    assert.equal(content.binary, false);
    const found = ok(
      await server.client.GET("/v1/rooms/{roomId}/sessions/{sessionId}/files/search", {
        params: { path, query: { q: "nts" } },
      }),
      "search",
    );
    assert.deepEqual(found.data.map((m) => m.path), ["notes.md"]);

    // A fork through the turn: a session in a worktree of its own, with the turn's file.
    const fork = ok(
      await server.client.POST("/v1/rooms/{roomId}/sessions/{sessionId}/fork", {
        params: { path },
        body: { atTurn: turnId, sessionId: "w1-fork" },
      }),
      "fork",
    );
    assert.deepEqual([fork.forkedFrom?.sessionId, fork.forkedFrom?.turnId], [sessionId, turnId]);
    assert.notEqual(fork.workspace?.path, top);
    assert.equal(readFileSync(join(fork.workspace?.path ?? "", "notes.md"), "utf8"), "from typescript\n");

    const committed = ok(
      await server.client.POST("/v1/rooms/{roomId}/sessions/{sessionId}/workspace/commit", {
        params: { path },
        body: { message: "notes" },
      }),
      "commit",
    );
    assert.equal(git(repo, "rev-parse", committed.branch).trim(), committed.commit);
    await room.event("workspace.committed", (e) => e.payload.commit === committed.commit);

    const restored = ok(
      await server.client.POST("/v1/rooms/{roomId}/sessions/{sessionId}/restore", {
        params: { path },
        body: { checkpoint: changes.payload.before },
      }),
      "restore",
    );
    assert.equal(restored.checkpoint, changes.payload.before);
    await room.event("workspace.restored", (e) => e.payload.undo === restored.undo);
    assert.equal(existsSync(join(top, "notes.md")), false);
  });
});
