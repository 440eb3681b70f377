// A session's queue through @ensemble/client: follow-ups queued while a turn runs, reordered, one
// removed, and the rest starting in order once the running turn ends; `queue.updated` shows each
// queued turn's place, size and the beginning of its text, `GET …/queue` its whole input.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { Collector, ok, roomId, type Server, startServer } from "./support.js";

describe("a session's queue through @ensemble/client", () => {
  let server: Server;
  let room: Collector;
  const roomName = roomId("queue");
  const sessionId = "q1";
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

  it("queues, reorders, removes and starts in order", async () => {
    ok(await server.client.POST("/v1/rooms/{roomId}/sessions", { params: { path: { roomId: roomName } }, body: { sessionId } }), "start");
    const submit = async (t: string, queue: boolean) =>
      ok(await server.client.POST("/v1/rooms/{roomId}/sessions/{sessionId}/turns", { params: { path }, body: { input: text(t), queue } }), t);
    const running = await submit("/hang", false);
    assert.equal(running.queued, false);
    const long = `second ${"x".repeat(2000)}`;
    const [first, second, third] = [await submit("first", true), await submit(long, true), await submit("third", true)];
    for (const a of [first, second, third]) assert.equal(a.queued, true);
    const order = [third.turnId, first.turnId, second.turnId];
    const reordered = ok(await server.client.PUT("/v1/rooms/{roomId}/sessions/{sessionId}/queue", { params: { path }, body: { order } }), "reorder");
    assert.deepEqual(reordered.data.map((q) => q.turnId), order);
    const removed = await server.client.DELETE("/v1/rooms/{roomId}/sessions/{sessionId}/queue/{turnId}", {
      params: { path: { ...path, turnId: first.turnId } },
    });
    assert.equal(removed.response.status, 204);
    const updated = await room.event("queue.updated", (e) => e.type === "queue.updated" && e.payload.reason === "removed");
    assert.ok(updated.type === "queue.updated");
    const shown = updated.payload.queue;
    assert.deepEqual(shown.map((q) => [q.turnId, q.position]), [[third.turnId, 0], [second.turnId, 1]]);
    assert.equal(shown[0]?.preview, "third");
    assert.ok(shown[1]?.truncated && shown[1].preview.length === 256 && long.startsWith(shown[1].preview), "a preview of 256 bytes");
    assert.equal(updated.payload.bytes, shown.reduce((n, q) => n + q.bytes, 0));
    const listed = ok(await server.client.GET("/v1/rooms/{roomId}/sessions/{sessionId}/queue", { params: { path } }), "queue");
    assert.deepEqual(listed.data[1]?.input, text(long), "the whole input over REST");
    ok(await server.client.POST("/v1/rooms/{roomId}/sessions/{sessionId}/cancel", { params: { path } }), "cancel");
    const thirdEnd = await room.event("turn.completed", (e) => e.turnId === third.turnId);
    const secondEnd = await room.event("turn.completed", (e) => e.turnId === second.turnId);
    assert.ok(thirdEnd.seq < secondEnd.seq, "in the queue's order");
    const queue = ok(await server.client.GET("/v1/rooms/{roomId}/sessions/{sessionId}/queue", { params: { path } }), "queue");
    assert.deepEqual(queue.data, []);
    const reasons = room
      .events()
      .filter((e) => e.type === "queue.updated")
      .map((e) => (e.type === "queue.updated" ? e.payload.reason : ""));
    assert.deepEqual(reasons, ["queued", "queued", "queued", "reordered", "removed", "started", "started"]);
  });
});
