// Unit tests of the queue of follow-ups: the model keeps a session's latest `queue.updated` (in live-only
// rooms too, and never in a transcript), a `GET …/queue` answer overtaken by an event is dropped (one
// taken is shown as an event would show it), a move's order, an edit's input (text replaced, images
// and files kept) and its whole text (read again when the event showed only its beginning), what a
// queued turn reads as, and the composer's keys (Enter a new line; Ctrl+Enter send / steer / queue;
// Alt+Enter queue).
import assert from "node:assert/strict";
import { test } from "node:test";
import { RoomModel } from "../src/model.js";
import { composerKey, cutText, editedInput, imagesToResend, moveInOrder, PREVIEW_BYTES, primaryAction, queuedLabel, queuedParts, summarise, wholeText, type QueuedSummary, type QueuedTurn } from "../src/queue.js";
import { ev, resetSeq, session } from "./fixtures.js";


/** A queued turn as `queue.updated` shows it (a short text: all of it). */
const queued = (turnId: string, text: string, attachments: QueuedTurn["input"] = []): QueuedSummary => ({ turnId, position: 0, bytes: 40 + text.length, items: 1 + attachments.length, preview: text, attachments, queuedAtMs: 5 });
/** A queued turn as `GET …/queue` answers with it. */
const whole = (turnId: string, text: string, extra: QueuedTurn["input"] = []): QueuedTurn => ({ turnId, input: [{ type: "text", text }, ...extra], queuedAtMs: 5 });

test("queue: the model keeps the latest queue.updated, also in a live-only room; the transcript shows none", () => {
  for (const full of [true, false]) {
    resetSeq();
    const room = new RoomModel("r", full);
    room.onEvent(ev("s1", "session.started", { session: session("s1") }));
    room.onEvent(ev("s1", "turn.started", { turnId: "t1", origin: "user", input: [{ type: "text", text: "/hang" }] }, "t1"));
    const st = room.session("s1")!;
    assert.deepEqual(st.queue, []);
    room.onEvent(ev("s1", "queue.updated", { queue: [queued("t2", "second")], reason: "queued", bytes: 46 }));
    room.onEvent(ev("s1", "queue.updated", { queue: [queued("t2", "second"), queued("t3", "third")], reason: "queued", bytes: 91 }));
    room.onEvent(ev("s1", "queue.updated", { queue: [queued("t3", "third"), queued("t2", "second")], reason: "reordered", bytes: 91 }));
    assert.deepEqual(st.queue.map((q) => q.turnId), ["t3", "t2"]);
    assert.equal(st.queueRev, 3);
    assert.ok(!st.transcript.items.some((i) => i.kind === "info" && /queue/i.test(i.text)), "no transcript line for the queue");
    room.onEvent(ev("s1", "turn.completed", { turnId: "t1" }, "t1"));
    room.onEvent(ev("s1", "queue.updated", { queue: [queued("t2", "second")], reason: "started", bytes: 46 }));
    room.onEvent(ev("s1", "turn.started", { turnId: "t3", origin: "user", input: [{ type: "text", text: "third" }] }, "t3"));
    assert.deepEqual(st.queue.map((q) => q.turnId), ["t2"]);
    assert.equal(st.activeTurnId, "t3");
  }
});

test("queue: a GET …/queue answer is taken unless a queue.updated came while it was asked", () => {
  resetSeq();
  const room = new RoomModel("r", true);
  room.onEvent(ev("s1", "session.started", { session: session("s1") }));
  const st = room.session("s1")!;
  // Asked at rev 0, answered with nothing newer: taken, shown as an event shows it.
  assert.equal(st.queueFromRest([whole("t2", "kept"), whole("t3", "x".repeat(1000))], 0), true);
  assert.deepEqual(st.queue.map((q) => [q.turnId, q.position, q.preview.length, q.truncated]), [["t2", 0, 4, false], ["t3", 1, PREVIEW_BYTES, true]]);
  // Asked at rev 0, but an event came before the answer: the event is newer.
  room.onEvent(ev("s1", "queue.updated", { queue: [], reason: "started", bytes: 0 }));
  assert.equal(st.queueFromRest([whole("t2", "stale")], 0), false);
  assert.deepEqual(st.queue, []);
  assert.equal(st.queueFromRest([whole("t4", "fresh")], 1), true);
  assert.deepEqual(st.queue.map((q) => q.turnId), ["t4"]);
});

test("queue: a GET …/queue answer summarised as the server's events are", () => {
  const image = { type: "image", attachment: "ab.png", mimeType: "image/png", name: "shot.png", bytes: 12 } as const;
  const s = summarise(whole("t1", "é".repeat(200), [image]), 3);
  assert.deepEqual([s.position, s.items, s.truncated, s.preview.length], [3, 2, true, PREVIEW_BYTES / 2], "cut at a character, in UTF-8 bytes");
  assert.deepEqual(s.attachments, [image]);
  assert.equal(s.bytes, new TextEncoder().encode(JSON.stringify([{ type: "text", text: "é".repeat(200) }, image])).length);
  assert.deepEqual(cutText("aé", 2), ["a", true]);
  assert.deepEqual(cutText("aé", 3), ["aé", false]);
  assert.deepEqual(cutText("a😀b", 4), ["a", true], "never half a character");
});

test("queue: an edit starts from the whole text, read again only when the event showed its beginning", async () => {
  let reads = 0;
  const read = async () => {
    reads++;
    return [whole("t1", "the whole text"), whole("t2", "other")];
  };
  assert.equal(await wholeText(queued("t1", "short"), read), "short");
  assert.equal(reads, 0, "a whole short text is the preview");
  assert.equal(await wholeText({ ...queued("t1", "the whole"), truncated: true }, read), "the whole text");
  assert.equal(await wholeText({ ...queued("gone", "x"), truncated: true }, read), null, "it left the queue");
  assert.equal(reads, 2);
});

test("queue: a move's order for PUT …/queue", () => {
  const order = ["a", "b", "c"];
  assert.deepEqual(moveInOrder(order, "b", -1), ["b", "a", "c"]);
  assert.deepEqual(moveInOrder(order, "b", 1), ["a", "c", "b"]);
  assert.equal(moveInOrder(order, "a", -1), null, "the first cannot go up");
  assert.equal(moveInOrder(order, "c", 1), null, "the last cannot go down");
  assert.equal(moveInOrder(order, "x", 1), null, "not queued (any more)");
  assert.deepEqual(order, ["a", "b", "c"], "the order given is left alone");
});

test("queue: an edit replaces the text and keeps the images (sent again as their bytes) and files", () => {
  const image = { type: "image", attachment: "ab.png", mimeType: "image/png", name: "shot.png", bytes: 12 } as const;
  const byPath = { type: "image", path: "diagram.png", name: "diagram.png" } as const;
  const file = { type: "file", path: "notes.md", bytes: 17, mimeType: "text/plain" } as const;
  const input: QueuedTurn["input"] = [{ type: "text", text: "old" }, image, { type: "text", text: "more old" }, byPath, file];
  assert.deepEqual(imagesToResend(input), ["ab.png"]);
  const data = new Map([["ab.png", "iVBORw0KGgo="]]);
  // What the server sets (`attachment`, `bytes`, a file's `mimeType`) is never sent back: it refuses them.
  const resent = [{ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png", name: "shot.png" }, { type: "image", path: "diagram.png", name: "diagram.png" }, { type: "file", path: "notes.md" }];
  assert.deepEqual(editedInput(input, "new text", data), [{ type: "text", text: "new text" }, ...resent]);
  assert.deepEqual(editedInput(input, "   ", data), resent, "blank text: the attachments alone");
  assert.throws(() => editedInput(input, "x"), /shot\.png was not read/);
  assert.equal(editedInput([{ type: "text", text: "old" }], " \n "), null);
});

test("queue: what a queued turn reads as, and its name in a control's label", () => {
  const q = queued("t2", "first line\nsecond line", [{ type: "image", attachment: "x.png", mimeType: "image/png", name: "x.png" }]);
  const parts = queuedParts(q);
  assert.equal(parts.text, "first line\nsecond line");
  assert.equal(parts.truncated, false);
  assert.deepEqual(parts.images.map((i) => i.name), ["x.png"]);
  assert.equal(queuedLabel(q), "first line second line");
  assert.equal(queuedLabel(queued("t3", "x".repeat(60))), `${"x".repeat(39)}…`);
  assert.equal(queuedLabel({ ...queued("t4", ""), attachments: [{ type: "file", path: "a" }] }), "1 attachment");
  assert.equal(queuedParts({ ...q, truncated: true }).truncated, true);
});

test("queue: the composer's keys", () => {
  const key = (k: Partial<{ key: string; ctrlKey: boolean; metaKey: boolean; altKey: boolean; shiftKey: boolean }>) => ({ key: "Enter", ctrlKey: false, metaKey: false, altKey: false, shiftKey: false, ...k });
  const idle = { running: false, steerable: true, queueable: true };
  const steering = { running: true, steerable: true, queueable: true };
  const noSteer = { running: true, steerable: false, queueable: true };
  const side = { running: true, steerable: false, queueable: false };
  // Enter alone (and Shift+Enter) stays a new line.
  for (const s of [idle, steering, noSteer, side]) {
    assert.equal(composerKey(key({}), s), null);
    assert.equal(composerKey(key({ shiftKey: true, ctrlKey: true }), s), null);
  }
  assert.equal(composerKey(key({ ctrlKey: true }), idle), "send");
  assert.equal(composerKey(key({ metaKey: true }), steering), "steer");
  assert.equal(composerKey(key({ ctrlKey: true }), noSteer), "queue");
  assert.equal(composerKey(key({ ctrlKey: true }), side), "send", "a side conversation has no queue: as before");
  for (const s of [idle, steering, noSteer]) assert.equal(composerKey(key({ altKey: true }), s), "queue");
  assert.equal(composerKey(key({ altKey: true }), side), null);
  assert.equal(composerKey(key({ key: "a", ctrlKey: true }), idle), null);
  assert.deepEqual([idle, steering, noSteer, side].map(primaryAction), ["send", "steer", "queue", "send"]);
});
