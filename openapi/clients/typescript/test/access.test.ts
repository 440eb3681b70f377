// Tokens and roles against the real binary: a viewer token made with the admin token follows its
// room (its `hello` says `viewer`) but may not act (403 `forbidden`), and its stream ends with a
// TokenRevokedError (close code 4003), without reconnecting, when the token is revoked or expires.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import {
  ApiError,
  CLOSE_TOKEN_REVOKED,
  createEnsembleClient,
  createToken,
  type EnsembleClient,
  type HelloFrame,
  type Me,
  revokeToken,
  RoomStreamError,
  TokenRevokedError,
} from "../src/index.js";
import { Collector, ok, roomId, type Server, startServer } from "./support.js";

/** The server closes a revoked token's sockets within a second (docs/api.md); a few seconds' slack. */
const REVOKE_WITHIN_MS = 5_000;

/** `promise`, or a rejection naming `what` after `ms`. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, rej) => {
    timer = setTimeout(() => rej(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe("tokens and roles", () => {
  let server: Server;
  let admin: Me;

  /** A client with another token, checked against the document like the server's own. */
  function clientWith(token: string): EnsembleClient {
    const client = createEnsembleClient({ baseUrl: server.baseUrl, token });
    client.use(server.checker.middleware());
    return client;
  }

  async function startSession(room: string, sessionId = "s"): Promise<void> {
    ok(await server.client.POST("/v1/rooms/{roomId}/sessions", { params: { path: { roomId: room } }, body: { sessionId } }), "start");
  }

  async function submit(room: string, text: string, sessionId = "s"): Promise<string> {
    const r = ok(
      await server.client.POST("/v1/rooms/{roomId}/sessions/{sessionId}/turns", {
        params: { path: { roomId: room, sessionId } },
        body: { input: [{ type: "text", text }] },
      }),
      "submit",
    );
    return r.turnId;
  }

  before(async () => {
    server = await startServer();
    admin = ok(await server.client.GET("/v1/me"), "me");
  });

  after(async () => {
    await server?.stop();
  });

  it("a viewer token made with the admin token: /v1/me says viewer, its stream follows the room and its hello says viewer", async () => {
    assert.deepEqual([admin.role, admin.rooms], ["admin", ["*"]]);
    const room = roomId("viewer");
    const { token: info, secret } = await createToken(server.client, { name: "viewer-bot", role: "viewer", rooms: [room] });
    assert.deepEqual([info.name, info.role, info.rooms, info.active, info.createdBy], ["viewer-bot", "viewer", [room], true, admin.name]);
    assert.match(secret, /^ens_[0-9a-f]{64}$/);
    const listed = ok(await server.client.GET("/v1/tokens"), "tokens");
    assert.ok(listed.data.some((t) => t.id === info.id));
    assert.ok(!JSON.stringify(listed).includes(secret), "the secret is shown once, never listed");

    const me = ok(await clientWith(secret).GET("/v1/me"), "me (viewer)");
    assert.deepEqual([me.tokenId, me.name, me.role, me.rooms], [info.id, "viewer-bot", "viewer", [room]]);

    const { stream, sockets } = server.roomStream(room, { token: secret, after: 0 });
    const c = new Collector(stream);
    try {
      const hello = await c.waitFor("hello", (f): f is HelloFrame => f.type === "hello");
      assert.equal(hello.role, "viewer");
      assert.equal(stream.role, "viewer");
      // The admin starts a session and a turn; the viewer's stream sees all of it.
      await startSession(room);
      const turnId = await submit(room, "hello");
      await c.event("turn.completed", (e) => e.payload.turnId === turnId);
      const page = ok(await server.client.GET("/v1/rooms/{roomId}/events", { params: { path: { roomId: room } } }), "events");
      assert.deepEqual(c.events(), page.data.slice(0, c.events().length));
      // What a request caused names the token behind it; what the agent produced does not.
      const started = await c.event("turn.started", (e) => e.payload.turnId === turnId);
      assert.deepEqual(started.actor, { tokenId: admin.tokenId, name: admin.name });
      const deltas = c.events().filter((e) => e.type === "message.delta" && e.turnId === turnId);
      assert.ok(deltas.length > 0 && deltas.every((e) => e.actor == null));
      assert.equal(sockets.length, 1);
    } finally {
      stream.close();
    }
  });

  it("a viewer may not submit a turn (403 forbidden) nor make tokens, and reaches no other room (404 room_not_found)", async () => {
    const room = roomId("forbidden");
    await startSession(room);
    const { secret } = await createToken(server.client, { name: "read-only", role: "viewer", rooms: [room] });
    const viewer = clientWith(secret);
    ok(await viewer.GET("/v1/rooms/{roomId}/events", { params: { path: { roomId: room } } }), "a viewer reads");

    const r = await viewer.POST("/v1/rooms/{roomId}/sessions/{sessionId}/turns", {
      params: { path: { roomId: room, sessionId: "s" } },
      body: { input: [{ type: "text", text: "may I?" }] },
    });
    assert.equal(r.data, undefined);
    assert.deepEqual([r.response.status, r.error?.error.code], [403, "forbidden"]);
    assert.deepEqual(r.error?.error.details, { requiredRole: "operator", role: "viewer" });

    await assert.rejects(createToken(viewer, { name: "escalate", role: "admin", rooms: ["*"] }), (e: unknown) => {
      assert.ok(e instanceof ApiError, String(e));
      assert.deepEqual([e.status, e.code], [403, "forbidden"]);
      return true;
    });

    const elsewhere = await viewer.GET("/v1/rooms/{roomId}/events", { params: { path: { roomId: roomId("elsewhere") } } });
    assert.deepEqual([elsewhere.response.status, elsewhere.error?.error.code], [404, "room_not_found"]);
    // Its stream of another room fails at once (404 on the upgrade), without retrying.
    const other = server.roomStream(roomId("elsewhere"), { token: secret, retryDelayMs: 10, maxRetries: 50 });
    const refused = new Collector(other.stream);
    await refused.finished;
    assert.ok(refused.error instanceof RoomStreamError && refused.error.reason === "refused", String(refused.error));
    assert.equal(other.sockets.length, 1, "no retry");
    // Nothing the viewer tried reached the session.
    const session = ok(await server.client.GET("/v1/rooms/{roomId}/sessions/{sessionId}", { params: { path: { roomId: room, sessionId: "s" } } }), "session");
    assert.equal(session.status, "ready");
  });

  it("revoking the token ends the viewer's stream with TokenRevokedError (4003) within seconds, without reconnecting", async () => {
    const room = roomId("revoke");
    const { token: info, secret } = await createToken(server.client, { name: "revoked-viewer", role: "viewer", rooms: [room] });
    // Reconnects would be quick and many: a stream that retried would show it.
    const { stream, sockets } = server.roomStream(room, { token: secret, after: 0, retryDelayMs: 10, maxRetries: 50 });
    const c = new Collector(stream);
    try {
      await c.waitFor("hello", (f) => f.type === "hello");
      await startSession(room);
      const turnId = await submit(room, "before the revocation");
      const done = await c.event("turn.completed", (e) => e.payload.turnId === turnId);

      const revoked = await revokeToken(server.client, info.id);
      assert.equal(revoked.id, info.id);
      assert.equal(revoked.active, false);
      assert.equal(typeof revoked.revokedAtMs, "number");
      await within(c.finished, REVOKE_WITHIN_MS, "the stream to end after the revocation");

      const err = c.error;
      assert.ok(err instanceof TokenRevokedError, `ended with ${String(err)}`);
      assert.ok(err instanceof RoomStreamError);
      assert.deepEqual([err.reason, err.closeCode, CLOSE_TOKEN_REVOKED], ["token_revoked", 4003, 4003]);
      assert.equal(err.lastSeq, done.seq);
      assert.equal(stream.lastSeq, done.seq);
      assert.equal(sockets.length, 1, "no reconnect attempt");
      assert.equal(stream.reconnects, 0);
      await assert.rejects(stream.next(), (e: unknown) => e === err, "the stream stays failed");
    } finally {
      stream.close();
    }

    // The token is refused everywhere from now on; revoking again answers the same token.
    const me = await clientWith(secret).GET("/v1/me");
    assert.deepEqual([me.response.status, me.error?.error.code], [401, "unauthorized"]);
    const again = server.roomStream(room, { token: secret, retryDelayMs: 10 });
    const refused = new Collector(again.stream);
    await refused.finished;
    assert.ok(refused.error instanceof RoomStreamError && refused.error.reason === "refused", String(refused.error));
    assert.equal(again.sockets.length, 1);
    assert.equal((await revokeToken(server.client, info.id)).active, false);
    await assert.rejects(revokeToken(server.client, "tok_does_not_exist"), (e: unknown) => e instanceof ApiError && e.status === 404 && e.code === "token_not_found");
  });

  it("an expiring token's stream ends the same way at its expiry", async () => {
    const room = roomId("expiry");
    const ttlSecs = 2;
    const { token: info, secret } = await createToken(server.client, { name: "short-lived", role: "operator", rooms: [room], ttlSecs });
    assert.ok(typeof info.expiresAtMs === "number" && info.expiresAtMs > info.createdAtMs);
    const { stream, sockets } = server.roomStream(room, { token: secret, retryDelayMs: 10, maxRetries: 50 });
    const c = new Collector(stream);
    const hello = await c.waitFor("hello", (f): f is HelloFrame => f.type === "hello");
    assert.equal(hello.role, "operator");
    await within(c.finished, ttlSecs * 1000 + REVOKE_WITHIN_MS, "the stream to end at the token's expiry");
    assert.ok(c.error instanceof TokenRevokedError, `ended with ${String(c.error)}`);
    assert.equal(sockets.length, 1, "no reconnect attempt");
  });

  it("matches the document", () => {
    assert.deepEqual(server.checker.problems, []);
  });
});
