// Usage and budgets through @ensemble/client: a session's ledger, the room's totals, and a budget
// that, once reached, refuses the next turn with `budget_exhausted` until it is raised.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { Collector, ok, roomId, type Server, startServer } from "./support.js";

describe("usage and budgets through @ensemble/client", () => {
  let server: Server;
  let room: Collector;
  const roomName = roomId("usage");
  const sessionId = "u1";
  const path = { roomId: roomName, sessionId };
  const text = (t: string) => [{ type: "text" as const, text: t }];

  before(async () => {
    server = await startServer();
    room = new Collector(server.roomStream(roomName, { after: 0 }).stream);
  });

  after(async () => {
    room?.stream.close();
    await server?.stop();
  });

  it("counts a turn, refuses past the budget, goes on once raised", async () => {
    ok(await server.client.POST("/v1/rooms/{roomId}/sessions", { params: { path: { roomId: roomName } }, body: { sessionId } }), "start");
    const set = ok(await server.client.PUT("/v1/rooms/{roomId}/sessions/{sessionId}/budget", { params: { path }, body: { maxTokens: 20 } }), "budget");
    assert.equal(set.budget?.maxTokens, 20);
    const submit = (t: string) => server.client.POST("/v1/rooms/{roomId}/sessions/{sessionId}/turns", { params: { path }, body: { input: text(t) } });
    const turn = ok(await submit("/spend 25"), "spend");
    await room.event("turn.completed", (e) => e.turnId === turn.turnId);
    const reached = await room.event("budget.exhausted", (e) => e.sessionId === sessionId);
    assert.equal(reached.payload.scope, "session");
    assert.equal(reached.payload.budget.maxTokens, 20);
    const used = ok(await server.client.GET("/v1/rooms/{roomId}/sessions/{sessionId}/usage", { params: { path } }), "usage");
    assert.deepEqual(used.turns.map((t) => t.turnId), [turn.turnId]);
    assert.equal(used.state.exhausted, true);
    const refused = await submit("more");
    assert.equal(refused.response.status, 409);
    assert.equal(refused.error?.error.code, "budget_exhausted");
    ok(await server.client.PUT("/v1/rooms/{roomId}/sessions/{sessionId}/budget", { params: { path }, body: { maxTokens: 10000 } }), "raise");
    ok(await submit("more"), "after the raise");
    const total = ok(await server.client.GET("/v1/rooms/{roomId}/usage", { params: { path: { roomId: roomName } } }), "room usage");
    assert.deepEqual(total.sessions.map((s) => s.sessionId), [sessionId]);
    assert.ok(total.totals.outputTokens >= 25);
  });
});
