// What the console's unit tests build rooms from: a session record and events as the server sends
// them. Each test file is bundled on its own, so each has its own seq counter.
import type { Event, Session } from "../src/model.js";

export const session = (id: string, extra: Partial<Session> = {}): Session => ({
  roomId: "r",
  sessionId: id,
  rootSessionId: id,
  provider: "scripted",
  scope: "canonical",
  status: "ready",
  submitAvailability: { state: "available" },
  resumable: true,
  live: true,
  visible: true,
  title: "New session",
  cwd: "/w",
  settings: {},
  createdAtMs: 1,
  updatedAtMs: 1,
  ...extra,
});

/** What an event may have besides its session, type, payload and turn. */
export interface EventExtra {
  roomId?: string;
  actor?: { tokenId: string; name: string };
  occurredAtMs?: number;
}

let seq = 0;

/** The next event's seq starts again at 1 (a fresh room). */
export function resetSeq(): void {
  seq = 0;
}

/** An event of `sessionId` with the next seq, in room "r" unless `extra` says otherwise. */
export function ev(sessionId: string, type: string, payload: unknown, turnId?: string, extra: EventExtra = {}): Event {
  seq += 1;
  const { roomId = "r", actor, occurredAtMs = 1000 + seq } = extra;
  return { seq, roomId, eventId: `e${seq}`, sessionId, scope: "canonical", turnId, occurredAtMs, type, payload, ...(actor ? { actor } : {}) } as unknown as Event;
}
