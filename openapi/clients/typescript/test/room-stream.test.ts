// RoomStream against the real binary: reconnecting mid-turn without a gap or a duplicate, terminal
// resyncs surfaced (not retried), bounded retries, keepalive pings, and the token kept out of URLs.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { type EventOf, type HelloFrame, RoomStream, RoomStreamError } from "../src/index.js";
import { Collector, messageText, ok, roomId, type Server, startServer } from "./support.js";

async function startSession(server: Server, room: string, sessionId = "s"): Promise<void> {
  ok(await server.client.POST("/v1/rooms/{roomId}/sessions", { params: { path: { roomId: room } }, body: { sessionId } }), "start");
}

async function submit(server: Server, room: string, text: string, sessionId = "s"): Promise<string> {
  const r = ok(
    await server.client.POST("/v1/rooms/{roomId}/sessions/{sessionId}/turns", {
      params: { path: { roomId: room, sessionId } },
      body: { input: [{ type: "text", text }] },
    }),
    "submit",
  );
  return r.turnId;
}

/** The error the stream ended with, once it has ended. */
async function streamError(c: Collector): Promise<RoomStreamError> {
  await c.finished;
  assert.ok(c.error instanceof RoomStreamError, `ended with ${String(c.error)}`);
  return c.error;
}

describe("RoomStream", () => {
  let server: Server;

  before(async () => {
    server = await startServer();
  });

  after(async () => {
    await server?.stop();
  });

  it("reconnects mid-turn: every seq exactly once, in order, and the text reassembles", async () => {
    const room = roomId("reconnect");
    const { stream, sockets } = server.roomStream(room, { after: 0, retryDelayMs: 10 });
    const c = new Collector(stream);
    try {
      await c.waitFor("hello", (f) => f.type === "hello");
      await startSession(server, room);
      const chunks = 400;
      const turnId = await submit(server, room, `/slow 3\n/chunks ${chunks}`);
      const deltas = () => c.events().filter((e) => e.type === "message.delta" && e.turnId === turnId).length;
      // Drop the connection twice while the turn streams, by killing the TCP socket under it.
      const dropsAt: number[] = [];
      for (const at of [20, 150]) {
        await c.waitFor(`${at} deltas`, () => deltas() >= at);
        dropsAt.push(stream.lastSeq ?? 0);
        sockets.at(-1)!.terminate();
        await c.waitFor(`hello #${dropsAt.length + 1}`, () => c.frames.filter((f) => f.type === "hello").length > dropsAt.length);
      }
      const completed = await c.event("turn.completed", (e) => e.payload.turnId === turnId);
      assert.equal(stream.reconnects, 2);
      assert.equal(sockets.length, 3);

      const seqs = c.events().map((e) => e.seq);
      assert.deepEqual(seqs, seqs.map((_, i) => i + 1), "seqs 1..N, no gap, no duplicate");
      assert.equal(stream.lastSeq, completed.seq);

      const expected = Array.from({ length: chunks }, (_, i) => `chunk ${i + 1}`).join(" ");
      const message = await c.event("message.completed", (e) => e.turnId === turnId);
      assert.equal(message.payload.text, expected);
      assert.equal(messageText(c.events(), turnId), expected, "the deltas reassemble the message exactly");

      // The reconnects had to replay: each new connection's head was past the seq at the drop.
      const hellos = c.frames.filter((f): f is HelloFrame => f.type === "hello").slice(1);
      const replayed = hellos.map((h, i) => h.headSeq - dropsAt[i]!);
      assert.ok(replayed.some((n) => n > 0), `events were missed while disconnected (${replayed.join(", ")})`);

      // And the stream is exactly the room log.
      const page = ok(await server.client.GET("/v1/rooms/{roomId}/events", { params: { path: { roomId: room }, query: { limit: 1000 } } }), "events");
      assert.deepEqual(c.events(), page.data.slice(0, c.events().length));
    } finally {
      stream.close();
    }
  });

  it("starts live at the head without `after`, and continues from there after a drop", async () => {
    const room = roomId("live");
    await startSession(server, room);
    const first = await submit(server, room, "before the stream");
    const history = new Collector(server.roomStream(room, { after: 0 }).stream);
    await history.event("turn.completed", (e) => e.payload.turnId === first);
    history.stream.close();

    const { stream, sockets } = server.roomStream(room, { retryDelayMs: 10 });
    const c = new Collector(stream);
    try {
      const hello = await c.waitFor("hello", (f): f is HelloFrame => f.type === "hello");
      const head = hello.headSeq;
      assert.ok(head > 0);
      assert.equal(stream.lastSeq, head);
      sockets[0]!.terminate();
      const second = await submit(server, room, "after the drop");
      await c.event("turn.completed", (e) => e.payload.turnId === second);
      const seqs = c.events().map((e) => e.seq);
      assert.deepEqual(seqs, seqs.map((_, i) => head + i + 1), "from head + 1, gap-free");
    } finally {
      stream.close();
    }
  });

  it("sends the token as a subprotocol, never in the URL", async () => {
    const { stream, sockets } = server.roomStream(roomId("proto"), { after: 0 });
    const c = new Collector(stream);
    try {
      await c.waitFor("hello", (f) => f.type === "hello");
      const ws = sockets[0]!;
      assert.equal(ws.protocol, "ensemble.v1");
      assert.ok(!ws.url.includes(server.token), ws.url);
      assert.match(ws.url, /^ws:\/\/127\.0\.0\.1:\d+\/v1\/rooms\/proto-[0-9a-f]+\/ws\?after=0$/);
    } finally {
      stream.close();
    }
    await c.finished;
    assert.equal(c.error, undefined, "close() ends the iteration without an error");
  });

  it("surfaces ahead_of_log instead of reconnecting", async () => {
    const { stream, sockets } = server.roomStream(roomId("ahead"), { after: 1_000_000, retryDelayMs: 10 });
    const c = new Collector(stream);
    const err = await streamError(c);
    assert.equal(err.reason, "ahead_of_log");
    assert.equal(err.headSeq, 0);
    assert.deepEqual(c.frames.map((f) => f.type), ["hello"]);
    assert.equal(sockets.length, 1, "no reconnect");
  });

  it("fails at once when the server refuses the token (401), without retrying", async () => {
    const room = roomId("denied");
    const begun = Date.now();
    const { stream, sockets } = server.roomStream(room, { token: "W".repeat(40), maxRetries: 8, retryDelayMs: 1000 });
    const err = await streamError(new Collector(stream));
    assert.equal(err.reason, "refused");
    assert.match(err.message, /HTTP 401/);
    assert.match(String((err.cause as Error | undefined)?.message), /401/);
    assert.equal(sockets.length, 1, "one attempt");
    assert.ok(Date.now() - begun < 1000, `took ${Date.now() - begun} ms`);
    const rest = await server.client.GET("/v1/rooms", { headers: { Authorization: `Bearer ${"W".repeat(40)}` } });
    assert.deepEqual([rest.response.status, rest.error?.error.code], [401, "unauthorized"]);
  });

  it("gives up after maxRetries failed attempts when nothing answers", async () => {
    // The server's own port after it is gone would race its restart; an address nothing listens on
    // is refused at once.
    const { stream, sockets } = server.roomStream(roomId("down"), { baseUrl: "http://127.0.0.1:9", maxRetries: 2, retryDelayMs: 10 });
    const err = await streamError(new Collector(stream));
    assert.equal(err.reason, "retries_exhausted");
    assert.equal(sockets.length, 3);
  });

  it("needs a WebSocket implementation where there is no global one", async () => {
    if (typeof (globalThis as { WebSocket?: unknown }).WebSocket === "function") return; // Node ≥ 22
    const stream = new RoomStream({ baseUrl: server.baseUrl, token: server.token, roomId: "x" });
    await assert.rejects(stream.next(), (e: unknown) => e instanceof RoomStreamError && e.reason === "no_websocket");
  });

  it("detects a dead connection by its unanswered pings, and retries a handshake that hangs", async () => {
    const room = roomId("frozen");
    const { stream, socketCount } = server.roomStream(room, { pingIntervalMs: 150, connectTimeoutMs: 500, retryDelayMs: 10 });
    const c = new Collector(stream);
    try {
      await c.waitFor("hello", (f) => f.type === "hello");
      // A frozen server keeps its TCP connections but answers nothing: no pong, no handshake.
      server.signal("SIGSTOP");
      try {
        await socketCount(3); // the dead connection dropped, then a handshake timed out
      } finally {
        server.signal("SIGCONT");
      }
      await c.waitFor("a second hello", () => c.frames.filter((f) => f.type === "hello").length >= 2);
      assert.equal(stream.reconnects, 1);
      await startSession(server, room);
      const turnId = await submit(server, room, "still there?");
      await c.event("turn.completed", (e) => e.payload.turnId === turnId);
      const seqs = c.events().map((e) => e.seq);
      assert.deepEqual(seqs, seqs.map((_, i) => i + 1));
    } finally {
      stream.close();
    }
  });

  it("matches the document", () => {
    assert.deepEqual(server.checker.problems, []);
  });
});

describe("RoomStream with pruned history and an idle timeout", () => {
  let server: Server;

  before(async () => {
    server = await startServer(["--retention-events", "5", "--ws-idle-secs", "2", "--ws-ping-secs", "30"]);
  });

  after(async () => {
    await server?.stop();
  });

  it("surfaces history_expired; a new stream from its headSeq continues", async () => {
    const room = roomId("pruned");
    const live = new Collector(server.roomStream(room).stream);
    let turnId: string;
    try {
      await live.waitFor("hello", (f) => f.type === "hello");
      await startSession(server, room);
      turnId = await submit(server, room, "one two three four five six seven eight nine ten");
      await live.event("turn.completed", (e) => e.payload.turnId === turnId);
    } finally {
      live.stream.close();
    }

    const rest = await server.client.GET("/v1/rooms/{roomId}/events", { params: { path: { roomId: room }, query: { after: 0 } } });
    assert.deepEqual([rest.response.status, rest.error?.error.code], [410, "history_expired"]);

    const { stream, sockets } = server.roomStream(room, { after: 0, retryDelayMs: 10 });
    const c = new Collector(stream);
    const err = await streamError(c);
    assert.equal(err.reason, "history_expired");
    assert.equal(err.headSeq, live.events().at(-1)!.seq);
    assert.equal(sockets.length, 1, "no reconnect loop");

    // The documented recovery: reload over REST, then stream from the resync's headSeq.
    const sessions = ok(await server.client.GET("/v1/rooms/{roomId}/sessions", { params: { path: { roomId: room } } }), "sessions");
    assert.equal(sessions.data[0]?.status, "ready");
    const next = new Collector(server.roomStream(room, { after: err.headSeq! }).stream);
    try {
      // Subscribed before the next turn: with 5 events of retention, a turn that finished before
      // this socket connected would have pruned its starting point (history_expired again).
      await next.waitFor("hello", (f) => f.type === "hello");
      const t = await submit(server, room, "again");
      const done: EventOf<"turn.completed"> = await next.event("turn.completed", (e) => e.payload.turnId === t);
      assert.equal(next.events()[0]?.seq, err.headSeq! + 1);
      assert.equal(next.events().at(-1), done);
    } finally {
      next.stream.close();
    }
  });

  it("keeps an idle connection open with pings; without them the server closes it and the stream reconnects", async () => {
    const room = roomId("idle");
    const pinging = server.roomStream(room, { pingIntervalMs: 400, retryDelayMs: 10 });
    const silent = server.roomStream(room, { pingIntervalMs: 0, retryDelayMs: 10 });
    const p = new Collector(pinging.stream);
    const s = new Collector(silent.stream);
    try {
      await p.waitFor("hello", (f) => f.type === "hello");
      // The silent stream is closed after --ws-idle-secs (2 s, close code 4001) and reconnects.
      await s.waitFor("a second hello", () => s.frames.filter((f) => f.type === "hello").length >= 2, 10_000);
      assert.equal(silent.stream.reconnects, 1);
      assert.equal(pinging.stream.reconnects, 0, "the pinging stream outlived the idle timeout");
      assert.equal(pinging.sockets.length, 1);
    } finally {
      pinging.stream.close();
      silent.stream.close();
    }
  });

  it("matches the document", () => {
    assert.deepEqual(server.checker.problems, []);
  });
});

describe("RoomStream behind a tiny server queue", () => {
  let server: Server;

  before(async () => {
    server = await startServer(["--ws-queue", "1"]);
  });

  after(async () => {
    await server?.stop();
  });

  it("reconnects after a `lagged` resync without a gap or a duplicate", async () => {
    const room = roomId("lagged");
    const { stream, sockets } = server.roomStream(room, { after: 0, retryDelayMs: 10 });
    const c = new Collector(stream);
    try {
      await c.waitFor("hello", (f) => f.type === "hello");
      await startSession(server, room);
      const chunks = 2000;
      const turnId = await submit(server, room, `/slow 0\n/chunks ${chunks}`);
      const message = await c.event("message.completed", (e) => e.turnId === turnId, 30_000);
      await c.event("turn.completed", (e) => e.payload.turnId === turnId);
      assert.ok(stream.reconnects > 0, "the server resynced the stream at least once");
      assert.equal(sockets.length, stream.reconnects + 1);
      const seqs = c.events().map((e) => e.seq);
      assert.deepEqual(seqs, seqs.map((_, i) => i + 1));
      assert.equal(messageText(c.events(), turnId), message.payload.text);
    } finally {
      stream.close();
    }
  });
});
