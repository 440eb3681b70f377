// A session's queue of follow-ups, DOM-free: what the console shows of each queued turn, the order a
// move asks for (`PUT …/queue`), the input an edit sends (`PATCH …/queue/{turnId}`: the text
// replaced, the images and files kept), and the composer's key bindings. The queue itself lives in
// `SessionState.queue` (from `queue.updated` events, or `GET …/queue` when a session is opened) as
// summaries: an event shows the beginning of each queued text, `GET …/queue` has all of it (an edit
// of a long one reads it there).

import type { Schemas } from "../../openapi/clients/typescript/src/client.js";
import { inputParts, type InputItem } from "./attach.js";

/** A queued turn as `GET …/queue` answers it: its whole input. */
export type QueuedTurn = Schemas["QueuedTurn"];
/** A queued turn as `queue.updated` shows it: its text's beginning, its images and files, its size. */
export type QueuedSummary = Schemas["QueuedTurnSummary"];

/** How much of a queued text the console keeps from `GET …/queue` (about what the server's events show). */
export const PREVIEW_BYTES = 256;

const utf8 = new TextEncoder();

/** `text` cut to at most `max` UTF-8 bytes (at a character), and whether that left some out. */
export function cutText(text: string, max: number): [string, boolean] {
  if (utf8.encode(text).length <= max) return [text, false];
  let out = "";
  let bytes = 0;
  for (const ch of text) {
    const n = utf8.encode(ch).length;
    if (bytes + n > max) break;
    out += ch;
    bytes += n;
  }
  return [out, true];
}

/** A queued turn `GET …/queue` answered with, as `queue.updated` would show it at `position`. */
export function summarise(q: QueuedTurn, position: number): QueuedSummary {
  const [preview, truncated] = cutText(inputParts(q.input).text, PREVIEW_BYTES);
  return {
    turnId: q.turnId,
    position,
    bytes: utf8.encode(JSON.stringify(q.input)).length,
    items: q.input.length,
    preview,
    truncated,
    attachments: q.input.filter((i) => i.type !== "text"),
    clientSubmitId: q.clientSubmitId ?? null,
    queuedAtMs: q.queuedAtMs,
  };
}

/** What a queued turn reads as: the beginning of its text (its text items, a line each), its images and files. */
export function queuedParts(q: QueuedSummary) {
  const { images, files } = inputParts(q.attachments ?? []);
  return { text: q.preview, truncated: q.truncated ?? false, images, files };
}

/** Its whole text, for an edit: the preview when that is all of it, else read from `GET …/queue` (`read`). */
export async function wholeText(q: QueuedSummary, read: () => Promise<QueuedTurn[]>): Promise<string | null> {
  if (!q.truncated) return q.preview;
  const whole = (await read()).find((x) => x.turnId === q.turnId);
  return whole ? inputParts(whole.input).text : null;
}

/** A short name of a queued turn for a control's label: its first words, else what it carries. */
export function queuedLabel(q: QueuedSummary, max = 40): string {
  const { text, images, files } = queuedParts(q);
  const t = text.replace(/\s+/g, " ").trim();
  if (t) return t.length > max ? `${t.slice(0, max - 1)}…` : t;
  const n = images.length + files.length;
  return n ? `${n} attachment${n === 1 ? "" : "s"}` : "follow-up";
}

/**
 * The queue's order with `turnId` moved one place up (-1) or down (+1), for `PUT …/queue`; null
 * when it cannot move that way (first, last, or not queued).
 */
export function moveInOrder(order: readonly string[], turnId: string, delta: -1 | 1): string[] | null {
  const i = order.indexOf(turnId);
  const j = i + delta;
  if (i < 0 || j < 0 || j >= order.length) return null;
  const next = [...order];
  [next[i], next[j]] = [next[j]!, next[i]!];
  return next;
}

/** The images of a queued turn an edit sends again (their `attachment`s: read back, then sent as data). */
export function imagesToResend(input: readonly InputItem[]): string[] {
  return input.flatMap((i) => (i.type === "image" && i.attachment ? [i.attachment] : []));
}

/**
 * A queued turn's input after its text was edited: one text item (when not blank) first, then its
 * images and files as they were. The server fills in `attachment` and `bytes` (and a file's
 * `mimeType`) itself and refuses them from a client, so a kept image is sent again as its bytes
 * (`data`: base64 by attachment, read from `…/attachments/{attachment}`), an image or a file by path
 * as that path. Null when nothing would be left (the server refuses an empty input).
 */
export function editedInput(input: readonly InputItem[], text: string, data: ReadonlyMap<string, string> = new Map()): InputItem[] | null {
  const rest: InputItem[] = [];
  for (const i of input) {
    if (i.type === "file") rest.push({ type: "file", path: i.path });
    else if (i.type === "image") {
      const name = i.name ? { name: i.name } : {};
      if (i.attachment) {
        const bytes = data.get(i.attachment);
        if (bytes === undefined) throw new Error(`the image ${i.name ?? i.attachment} was not read`);
        rest.push({ type: "image", data: bytes, mimeType: i.mimeType ?? null, ...name });
      } else if (i.path) rest.push({ type: "image", path: i.path, ...name });
      else if (i.data) rest.push({ type: "image", data: i.data, mimeType: i.mimeType ?? null, ...name });
    }
  }
  const out: InputItem[] = text.trim() ? [{ type: "text", text }, ...rest] : rest;
  return out.length ? out : null;
}

/** What the composer's keys do with what is typed (`null`: the key is the textarea's own). */
export type SubmitHow = "send" | "steer" | "queue";

/**
 * The composer's keys. Enter alone is a new line (messages have several, and scripted directives
 * one per line). Ctrl+Enter (⌘+Enter) is the primary action: send when no turn runs; while one runs,
 * steer it when the agent can steer, else queue. Alt+Enter queues a follow-up (with nothing
 * running the server starts it at once, so it is never refused for being early).
 */
export function composerKey(e: { key: string; ctrlKey: boolean; metaKey: boolean; altKey: boolean; shiftKey: boolean }, s: { running: boolean; steerable: boolean; queueable: boolean }): SubmitHow | null {
  if (e.key !== "Enter" || e.shiftKey) return null;
  if (e.altKey && !e.ctrlKey && !e.metaKey) return s.queueable ? "queue" : null;
  if (e.ctrlKey || e.metaKey) return primaryAction(s);
  return null;
}

/** What the composer's primary button (and Ctrl+Enter) does. */
export function primaryAction(s: { running: boolean; steerable: boolean; queueable: boolean }): SubmitHow {
  if (!s.running) return "send";
  if (s.steerable) return "steer";
  return s.queueable ? "queue" : "send";
}
