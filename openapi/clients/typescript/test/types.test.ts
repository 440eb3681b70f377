// Compile-time checks of the public types (this file fails to build when they regress), plus the
// little of it that can be checked at run time without a server.

import assert from "node:assert/strict";
import { test } from "node:test";
import NodeWebSocket from "ws";

import {
  type AnswerRequest,
  type EventOf,
  type QuestionAnswer,
  type RoomFrame,
  RoomStream,
  RoomStreamError,
  type ServerFrame,
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

test("the public types compile as documented", () => {
  assert.equal(typeof fromNode, "function");
  assert.ok(fromBrowser === undefined || typeof fromBrowser === "function");
  assert.deepEqual([text, choices, wrong, undecided].map((a) => a.decision), ["accept", "accept", "accept", "maybe"]);
});
