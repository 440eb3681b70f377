// Compile-time checks of the public types (this file fails to build when they regress), plus the
// little of it that can be checked at run time without a server.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import NodeWebSocket from "ws";

import {
  type Actor,
  type AnswerRequest,
  createEnsembleClient,
  createToken,
  type Event,
  type EventOf,
  type HelloFrame,
  type QuestionAnswer,
  revokeToken,
  type Role,
  type RoomFrame,
  RoomStream,
  RoomStreamError,
  type ServerFrame,
  TokenRevokedError,
  type WebSocketConstructor,
} from "../src/index.js";

// Both WebSocket implementations fit RoomStream's `WebSocket` option.
const fromNode: WebSocketConstructor = NodeWebSocket;
const fromBrowser: WebSocketConstructor | undefined = (globalThis as { WebSocket?: typeof WebSocket }).WebSocket;

// `answers` is a map of QuestionAnswer: a text, or codex's `{answers: [...]}` (it was Record<string, never>).
const text: AnswerRequest = { decision: "accept", answers: { answer: "blue" } };
const choices: AnswerRequest = { decision: "accept", answers: { answer: { answers: ["blue", "green"] } } };
// @ts-expect-error a number is not an answer
const wrong: AnswerRequest = { decision: "accept", answers: { answer: 3 } };
// @ts-expect-error not a decision
const undecided: AnswerRequest = { decision: "maybe" };

// Frames narrow by `type`; RoomFrame is ServerFrame without the frames the stream handles itself.
type Assert<T extends true> = T;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export type RoomFrameIsServerFrameLessPongResync = Assert<Same<RoomFrame, Exclude<ServerFrame, { type: "pong" | "resync" }>>>;
export type TurnStartedHasOrigin = Assert<Same<EventOf<"turn.started">["payload"]["origin"], "user" | "goal_continuation" | "provider">>;
export type AnswerIsTextOrChoices = Assert<Same<QuestionAnswer, string | { answers: string[] }>>;
// Access: the roles, the hello's role, and the envelope's optional `actor` on every event variant.
export type RolesAreTheFour = Assert<Same<Role, "viewer" | "operator" | "approver" | "admin">>;
export type HelloSaysTheRole = Assert<Same<HelloFrame["role"], Role>>;
export type StreamRoleIsTheHellos = Assert<Same<RoomStream["role"], Role | undefined>>;
export type EveryEventMayHaveAnActor = Assert<Same<Event["actor"], Actor | null | undefined>>;
export type RevokedIsAStreamError = Assert<TokenRevokedError extends RoomStreamError ? true : false>;

// The README's example compiles (it is not run here: the other tests do that against a server).
export async function readmeExample(baseUrl: string, token: string): Promise<void> {
  const stream = new RoomStream({ baseUrl, token, roomId: "demo", after: 0, WebSocket: NodeWebSocket });
  try {
    for await (const frame of stream) {
      if (frame.type === "event") console.log(frame.event.seq, frame.event.type); // durable, exactly once
      else if (frame.type === "side_event") console.log("side", frame.event.sessionId, frame.event.type);
      else if (frame.type === "hello") console.log("connected, head", frame.headSeq); // after every (re)connect
    }
  } catch (e) {
    if (e instanceof RoomStreamError && e.reason === "history_expired") console.log("reload, then after:", e.headSeq);
  }
}

// The README's "Tokens and roles" example compiles too, and is this function's body verbatim (the
// test below checks); test/access.test.ts runs the same steps against the server.
export async function readmeTokensExample(baseUrl: string, adminToken: string, sessionId: string, WebSocket: WebSocketConstructor): Promise<void> {
  const admin = createEnsembleClient({ baseUrl, token: adminToken });
  // The secret is in this answer only: hand it over now.
  const { token: info, secret } = await createToken(admin, { name: "phone", role: "viewer", rooms: ["demo"], ttlSecs: 7 * 86400 });

  // With the new token: it reads, follows the room, and may not act.
  const viewer = createEnsembleClient({ baseUrl, token: secret });
  console.log((await viewer.GET("/v1/me")).data?.role); // viewer
  const { error, response } = await viewer.POST("/v1/rooms/{roomId}/sessions/{sessionId}/turns", {
    params: { path: { roomId: "demo", sessionId } },
    body: { input: [{ type: "text", text: "hello" }] },
  });
  console.log(response.status, error?.error.code); // 403 forbidden
  const stream = new RoomStream({ baseUrl, token: secret, roomId: "demo", after: 0, WebSocket });
  try {
    for await (const frame of stream) {
      if (frame.type === "hello") console.log("connected as", frame.role); // viewer (also stream.role)
      else if (frame.type === "event") console.log(frame.event.type, "by", frame.event.actor?.name ?? "the agent");
    }
  } catch (e) {
    if (e instanceof TokenRevokedError) console.log("revoked at seq", e.lastSeq); // ends at once, without reconnecting
    else throw e;
  }

  // Taking it back (with the admin token): its requests are 401 from now on, its streams end (4003).
  await revokeToken(admin, info.id);
}

test("the public types compile as documented", () => {
  assert.equal(typeof fromNode, "function");
  const revoked = new TokenRevokedError("token revoked or expired", 7);
  assert.ok(revoked instanceof RoomStreamError && revoked instanceof Error);
  assert.deepEqual([revoked.name, revoked.reason, revoked.closeCode, revoked.lastSeq], ["TokenRevokedError", "token_revoked", 4003, 7]);
  assert.ok(fromBrowser === undefined || typeof fromBrowser === "function");
  assert.deepEqual([text, choices, wrong, undecided].map((a) => a.decision), ["accept", "accept", "accept", "maybe"]);
});

test("the README's tokens example is readmeTokensExample's body", () => {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  const source = readFileSync(new URL("../../test/types.test.ts", import.meta.url), "utf8");
  const fn = /^export async function readmeTokensExample\(.*\n((?:.*\n)*?)\}\n/m.exec(source);
  assert.ok(fn?.[1], "readmeTokensExample not found");
  const body = fn[1].replace(/^ {2}/gm, "");
  const blocks = [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
  const block = blocks.find((b) => b.includes("createToken("));
  assert.ok(block, "no ts block with createToken( in README.md");
  assert.ok(block.endsWith(body), `README.md's block does not end with readmeTokensExample's body:\n${body}`);
});
