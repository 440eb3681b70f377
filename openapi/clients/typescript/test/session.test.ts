// A full scripted session against the real binary, through this package only: the typed REST client
// for every call, a RoomStream for the room's frames. Every REST response and every frame is also
// checked against the server's OpenAPI document (see openapi-check.ts).

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import type { AnswerRequest, Event, EventOf, EventType, Session } from "../src/index.js";
import { EVENT_TYPES, frameKind, summarize } from "./exhaustive.js";
import { Collector, messageText, noContent, ok, roomId, type Server, startServer } from "./support.js";

describe("a scripted session through @ensemble/client", () => {
  let server: Server;
  let room: Collector;
  const roomName = roomId("session");
  const sessionId = "s1";
  const sideId = "s1-side";
  const path = { roomId: roomName, sessionId };

  before(async () => {
    server = await startServer();
    room = new Collector(server.roomStream(roomName, { after: 0 }).stream);
  });

  after(async () => {
    room?.stream.close();
    await server?.stop();
  });

  async function submit(text: string, extra: { steer?: boolean; clientSubmitId?: string } = {}) {
    return ok(
      await server.client.POST("/v1/rooms/{roomId}/sessions/{sessionId}/turns", {
        params: { path },
        body: { input: [{ type: "text", text }], ...extra },
      }),
      `submit ${JSON.stringify(text)}`,
    );
  }

  it("starts a session", async () => {
    const started = await server.client.POST("/v1/rooms/{roomId}/sessions", {
      params: { path: { roomId: roomName } },
      body: { sessionId, title: "typescript client" },
    });
    assert.equal(started.response.status, 201);
    const session: Session = ok(started, "start");
    assert.equal(session.sessionId, sessionId);
    assert.equal(session.scope, "canonical");
    assert.equal(session.cwd, server.workDir);
    const e = await room.event("session.started", (e) => e.sessionId === sessionId);
    assert.equal(e.payload.session.provider, "scripted");
    const commands = await room.event("commands.updated");
    assert.ok(commands.payload.commands.some((c) => c.name === "run"));
    const hello = await room.waitFor("hello", (f) => f.type === "hello");
    assert.equal(hello.type === "hello" && hello.roomId, roomName);
  });

  it("runs a command after its approval is accepted", async () => {
    const { turnId, duplicate } = await submit("/run echo hello", { clientSubmitId: "run-1" });
    assert.equal(duplicate, false);
    const asked = await room.event("interaction.requested", (e) => e.turnId === turnId);
    assert.equal(asked.payload.kind, "commandApproval");
    assert.equal(asked.payload.command, "echo hello");
    const pending = ok(await server.client.GET("/v1/rooms/{roomId}/sessions/{sessionId}/interactions", { params: { path } }), "interactions");
    assert.deepEqual(pending.data.map((i) => i.requestId), [asked.payload.requestId]);
    const answered = ok(
      await server.client.POST("/v1/rooms/{roomId}/sessions/{sessionId}/interactions/{requestId}", {
        params: { path: { ...path, requestId: asked.payload.requestId } },
        body: { decision: "accept" },
      }),
      "answer",
    );
    assert.equal(answered.decision, "accept");
    await room.event("turn.completed", (e) => e.payload.turnId === turnId);
    const turn = room.events().filter((e) => e.turnId === turnId);
    const types = turn.map((e) => e.type);
    for (const t of ["turn.started", "interaction.resolved", "call.started", "call.updated", "call.completed", "usage.updated"] as const) {
      assert.ok(types.includes(t), `${t} in ${types.join(", ")}`);
    }
    const done = turn.find((e) => e.type === "call.completed");
    assert.ok(done?.type === "call.completed" && done.payload.exitCode === 0 && done.payload.status === "completed");
    // The same clientSubmitId again is the same turn.
    const again = await submit("/run echo hello", { clientSubmitId: "run-1" });
    assert.deepEqual([again.turnId, again.duplicate], [turnId, true]);
  });

  it("answers a question with typed answers", async () => {
    const { turnId } = await submit("/ask Which colour?");
    const asked = await room.event("interaction.requested", (e) => e.turnId === turnId);
    assert.equal(asked.payload.kind, "userInput");
    assert.deepEqual(asked.payload.questions?.map((q) => q.id), ["answer"]);
    // Strict mode: `answers` is a map of QuestionAnswer (it was Record<string, never> before).
    const body: AnswerRequest = { decision: "accept", answers: { answer: "blue" } };
    ok(
      await server.client.POST("/v1/rooms/{roomId}/sessions/{sessionId}/interactions/{requestId}", {
        params: { path: { ...path, requestId: asked.payload.requestId } },
        body: { decision: "accept", answers: { answer: "blue" } },
      }),
      "answer",
    );
    const resolved = await room.event("interaction.resolved", (e) => e.payload.requestId === asked.payload.requestId);
    assert.deepEqual(resolved.payload.answers, body.answers);
    assert.equal(resolved.payload.resolvedBy, "client");
    const completed = await room.event("message.completed", (e) => e.turnId === turnId);
    assert.match(completed.payload.text, /blue/);
    await room.event("turn.completed", (e) => e.payload.turnId === turnId);
    // Answered: nothing pending, and answering again is a typed 409.
    const again = await server.client.POST("/v1/rooms/{roomId}/sessions/{sessionId}/interactions/{requestId}", {
      params: { path: { ...path, requestId: asked.payload.requestId } },
      body,
    });
    assert.equal(again.response.status, 409);
    assert.ok(again.error, "a typed error body");
    assert.equal(again.error.error.code, "interaction_resolved");
  });

  it("cancels a streaming turn", async () => {
    const { turnId } = await submit("/slow 20\n/chunks 200");
    await room.waitFor("a few deltas", () => room.events().filter((e) => e.type === "message.delta" && e.turnId === turnId).length >= 3);
    const canceled = ok(await server.client.POST("/v1/rooms/{roomId}/sessions/{sessionId}/cancel", { params: { path } }), "cancel");
    assert.equal(canceled.turnId, turnId);
    const end = await room.event("turn.canceled", (e) => e.payload.turnId === turnId);
    assert.equal(end.payload.reason, "interrupted");
    const deltas = room.events().filter((e) => e.type === "message.delta" && e.turnId === turnId).length;
    assert.ok(deltas < 200, `canceled mid-stream (${deltas} of 200 chunks)`);
    const closed = await room.event("message.completed", (e) => e.turnId === turnId);
    assert.equal(closed.payload.text, messageText(room.events(), turnId));
    const noTurn = await server.client.POST("/v1/rooms/{roomId}/sessions/{sessionId}/cancel", { params: { path } });
    assert.equal(noTurn.error?.error.code, "no_active_turn");
  });

  it("uses a tool, reasons, plans", async () => {
    const { turnId } = await submit("hello there\n/tool grep -n TODO\n/reason thinking it over\n/plan read; write; test");
    await room.event("turn.completed", (e) => e.payload.turnId === turnId);
    const plan = await room.event("plan.updated", (e) => e.turnId === turnId);
    assert.deepEqual(plan.payload.steps.map((s) => s.step), ["read", "write", "test"]);
    const reasoning = await room.event("reasoning.completed", (e) => e.turnId === turnId);
    assert.equal(reasoning.payload.text, "thinking it over");
    const call = await room.event("call.started", (e) => e.turnId === turnId);
    assert.equal(call.payload.name, "grep");
    const message = await room.event("message.completed", (e) => e.turnId === turnId);
    assert.match(message.payload.text, /You said: hello there/);
  });

  it("reports a failed turn", async () => {
    const { turnId } = await submit("/fail on purpose");
    const failed = await room.event("turn.failed", (e) => e.payload.turnId === turnId);
    assert.equal(failed.payload.error.code, "scripted_failure");
  });

  it("steers a running turn", async () => {
    const { turnId } = await submit("/slow 20\n/chunks 30");
    await room.event("message.delta", (e) => e.turnId === turnId);
    const steered = await submit("and one more thing", { steer: true });
    assert.deepEqual([steered.turnId, steered.steered], [turnId, true]);
    const e = await room.event("turn.steered", (e) => e.payload.turnId === turnId);
    assert.deepEqual(e.payload.input, [{ type: "text", text: "and one more thing" }]);
    await room.event("turn.completed", (e) => e.payload.turnId === turnId);
    const message = await room.event("message.completed", (e) => e.turnId === turnId);
    assert.match(message.payload.text, /steered: and one more thing/);
  });

  it("sets, pauses, resumes and clears a goal", async () => {
    const set = ok(
      await server.client.PUT("/v1/rooms/{roomId}/sessions/{sessionId}/goal", {
        params: { path },
        body: { objective: "stay idle for now", clientSubmitId: "g-1" },
      }),
      "set goal",
    );
    assert.deepEqual([set.status, set.origin, set.objective], ["active", "user", "stay idle for now"]);
    await room.event("goal.updated", (e) => e.payload.goal.operationId === set.operationId && e.payload.goal.status === "active");
    const paused = ok(
      await server.client.POST("/v1/rooms/{roomId}/sessions/{sessionId}/goal/pause", { params: { path, query: { clientSubmitId: "g-2" } } }),
      "pause",
    );
    assert.equal(paused.status, "paused");
    assert.ok(paused.revision > set.revision);
    await room.event("goal.updated", (e) => e.payload.goal.status === "paused");
    const resumed = ok(
      await server.client.POST("/v1/rooms/{roomId}/sessions/{sessionId}/goal/resume", { params: { path, query: { clientSubmitId: "g-3" } } }),
      "resume",
    );
    assert.equal(resumed.status, "active");
    const got = ok(await server.client.GET("/v1/rooms/{roomId}/sessions/{sessionId}/goal", { params: { path } }), "get goal");
    assert.equal(got.revision, resumed.revision);
    // Reusing a clientSubmitId for another action is a conflict.
    const conflict = await server.client.POST("/v1/rooms/{roomId}/sessions/{sessionId}/goal/pause", {
      params: { path, query: { clientSubmitId: "g-1" } },
    });
    assert.equal(conflict.error?.error.code, "client_submit_id_conflict");
    noContent(
      await server.client.DELETE("/v1/rooms/{roomId}/sessions/{sessionId}/goal", { params: { path, query: { clientSubmitId: "g-4" } } }),
      "clear goal",
    );
    const cleared = await room.event("goal.cleared");
    assert.ok(cleared.payload.revision > resumed.revision);
    const none = await server.client.GET("/v1/rooms/{roomId}/sessions/{sessionId}/goal", { params: { path } });
    assert.deepEqual([none.response.status, none.error?.error.code], [404, "no_goal"]);
  });

  it("credits a continuation by the claim once, then reports an unproven one", async () => {
    // `noevidence`: the agent's continuations report no turn-scoped goal update, so the first is
    // credited by the claim the operation left (single use) and the second is unproven.
    const goal = ok(
      await server.client.PUT("/v1/rooms/{roomId}/sessions/{sessionId}/goal", {
        params: { path },
        body: { objective: "finish the work noevidence steps=2", clientSubmitId: "g-5" },
      }),
      "set goal",
    );
    const reconcile = await room.event("goal.reconcile_required");
    assert.equal(reconcile.payload.reason, "unproven_continuation");
    const continuations = room.events().filter((e): e is EventOf<"turn.started"> => e.type === "turn.started" && e.payload.origin !== "user");
    assert.equal(continuations.length, 2);
    const [credited, unproven] = continuations.map((e) => e.payload);
    assert.deepEqual([credited?.origin, credited?.goalOperationId], ["goal_continuation", goal.operationId]);
    assert.deepEqual([unproven?.origin, unproven?.goalOperationId ?? null], ["provider", null]);
    assert.equal(reconcile.payload.providerTurnId !== undefined, true);
    await room.event("turn.completed", (e) => e.payload.turnId === unproven?.turnId);
    await room.event("goal.updated", (e) => e.payload.goal.operationId === goal.operationId && e.payload.goal.status === "complete");
    noContent(
      await server.client.DELETE("/v1/rooms/{roomId}/sessions/{sessionId}/goal", { params: { path, query: { clientSubmitId: "g-6" } } }),
      "clear goal",
    );
    await room.event("goal.cleared", (e) => e.payload.revision > goal.revision);
  });

  it("holds a side conversation", async () => {
    const caps = ok(await server.client.GET("/v1/rooms/{roomId}/sessions/{sessionId}/side-capabilities", { params: { path } }), "caps");
    assert.deepEqual(caps, { supported: true, activeSourceTurn: true, ephemeral: true, hideInheritedTurns: true, modelBoundaryInjected: true });
    const opened = await server.client.POST("/v1/rooms/{roomId}/sessions/{sessionId}/sides", {
      params: { path },
      body: { requestId: "why-1", sideSessionId: sideId },
    });
    assert.equal(opened.response.status, 201);
    const side = ok(opened, "open side");
    assert.deepEqual([side.session.sessionId, side.session.scope, side.session.sourceSessionId], [sideId, "side", sessionId]);
    const reopened = await server.client.POST("/v1/rooms/{roomId}/sessions/{sessionId}/sides", {
      params: { path },
      body: { requestId: "why-1", sideSessionId: sideId },
    });
    assert.equal(reopened.response.status, 200);

    const sidePath = { roomId: roomName, sessionId: sideId };
    const { turnId } = ok(
      await server.client.POST("/v1/rooms/{roomId}/sessions/{sessionId}/turns", {
        params: { path: sidePath },
        body: { input: [{ type: "text", text: "why did you pick that library?" }] },
      }),
      "side turn",
    );
    const started = await room.sideEvent("session.started", (e) => e.sessionId === sideId);
    assert.equal(started.payload.ephemeral, true);
    assert.equal(started.scope, "side");
    await room.sideEvent("notice", (e) => e.sessionId === sideId);
    await room.sideEvent("turn.completed", (e) => e.payload.turnId === turnId);
    const frames = room.sideEvents(sideId);
    assert.deepEqual(frames.map((e) => e.seq), frames.map((_, i) => i + 1), "a side's seqs count from 1, gap-free");
    assert.ok(!room.events().some((e) => e.sessionId === sideId), "side events never enter the room log");

    // Its events over REST, paged.
    const replay: Event[] = [];
    for (let next = 0; ; ) {
      const page = ok(
        await server.client.GET("/v1/rooms/{roomId}/sessions/{sessionId}/events", { params: { path: sidePath, query: { after: next, limit: 3 } } }),
        "side events",
      );
      if (page.data.length === 0) break;
      replay.push(...page.data);
      next = page.data.at(-1)!.seq;
    }
    assert.deepEqual(replay, room.sideEvents(sideId).slice(0, replay.length));
    assert.ok(replay.length >= frames.length);
    // A canonical session's events: its tail, newest last, and where the older page ends.
    const tail = ok(
      await server.client.GET("/v1/rooms/{roomId}/sessions/{sessionId}/events", { params: { path, query: { before: Number.MAX_SAFE_INTEGER, limit: 2 } } }),
      "session tail",
    );
    assert.equal(tail.data.length, 2);
    assert.ok(tail.data.every((e) => e.sessionId === path.sessionId));
    assert.ok(tail.data[0]!.seq < tail.data[1]!.seq);
    assert.equal(tail.prev, tail.data[0]!.seq);
    const present = ok(await server.client.GET("/v1/rooms/{roomId}/sessions/{sessionId}/present", { params: { path } }), "present");
    assert.equal(present.session.sessionId, path.sessionId);
    assert.ok(present.headSeq >= tail.data[1]!.seq);
  });

  it("releases and resumes the session (its side ends)", async () => {
    noContent(await server.client.POST("/v1/rooms/{roomId}/sessions/{sessionId}/release", { params: { path } }), "release");
    const released = await room.event("session.updated", (e) => e.payload.reason === "released");
    assert.equal(released.payload.session.live, false);
    const sideEnd = await room.sideEvent("session.completed", (e) => e.sessionId === sideId);
    assert.equal(sideEnd.payload.session.status, "completed");
    const resumed = ok(await server.client.POST("/v1/rooms/{roomId}/sessions/{sessionId}/resume", { params: { path } }), "resume");
    assert.equal(resumed.live, true);
    await room.event("session.updated", (e) => e.payload.reason === "resumed");
    const { turnId } = await submit("/history");
    const history = await room.event("message.completed", (e) => e.turnId === turnId);
    assert.match(history.payload.text, /Which colour/);
  });

  it("closes the session", async () => {
    noContent(await server.client.DELETE("/v1/rooms/{roomId}/sessions/{sessionId}", { params: { path } }), "close");
    const completed = await room.event("session.completed", (e) => e.sessionId === sessionId);
    assert.equal(completed.payload.session.status, "completed");
    noContent(await server.client.DELETE("/v1/rooms/{roomId}/sessions/{sessionId}", { params: { path } }), "close again");
    const session = ok(await server.client.GET("/v1/rooms/{roomId}/sessions/{sessionId}", { params: { path } }), "get");
    assert.equal(session.status, "completed");
  });

  it("pages the room's events: the typed union covers everything, and the stream saw the same", async () => {
    const events: Event[] = [];
    let headSeq = 0;
    for (let next = 0; ; ) {
      const page = ok(await server.client.GET("/v1/rooms/{roomId}/events", { params: { path: { roomId: roomName }, query: { after: next, limit: 97 } } }), "events");
      headSeq = page.headSeq;
      if (page.data.length === 0) break;
      events.push(...page.data);
      next = page.data.at(-1)!.seq;
    }
    assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1), "seqs 1..head, gap-free");
    assert.equal(events.at(-1)?.seq, headSeq);
    for (const e of events) {
      assert.equal(e.roomId, roomName);
      assert.ok(summarize(e).length > 0);
    }
    await room.waitFor(`event ${headSeq}`, (f) => f.type === "event" && f.event.seq === headSeq);
    assert.deepEqual(room.events(), events, "the RoomStream delivered exactly the room log");

    const seen = new Set<EventType>([...events, ...room.sideEvents()].map((e) => e.type));
    // `session.failed` is declared but the server never emits it (no provider reports one); the
    // workspace events need a git work tree (test/workspace.test.ts has them); the queue's are in
    // test/queue.test.ts.
    const notHere = new Set<EventType>([
      "session.failed",
      "turn.changes",
      "workspace.restored",
      "workspace.committed",
      "queue.updated",
      // test/usage.test.ts; an approval left waiting (server/tests/it/webhooks.rs).
      "budget.exhausted",
      "session.needs_attention",
      // An agent in its box reaching a host it may not (server/tests/it/isolation.rs).
      "network.blocked",
    ]);
    const expected = (Object.keys(EVENT_TYPES) as EventType[]).filter((t) => !notHere.has(t));
    const missing = expected.filter((t) => !seen.has(t));
    assert.deepEqual(missing, [], `event types the session did not produce: ${missing.join(", ")}`);

    // Every frame as the document describes it (REST responses were checked as they came).
    for (const f of room.frames) {
      assert.ok(frameKind(f));
      server.checker.check("ServerFrame", f, `frame ${f.type}`);
    }
    assert.deepEqual(server.checker.problems, [], "the server's answers match the OpenAPI document");
    assert.ok((server.checker.checked.get("get /v1/rooms/{roomId}/events 200") ?? 0) > 1);
  });
});
