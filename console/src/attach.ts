// Images and files in a turn, DOM-free: what the composer takes (checked before anything is sent),
// the turn's input items it sends, how a turn's images and files read in the transcript, and a
// refusal of the server about them said with the image's name instead of `input[N]`.

import type { Schemas } from "../../openapi/clients/typescript/src/client.js";
import { showControls } from "./text.js";

export type InputItem = Schemas["InputItem"];

/** The image types a turn takes (the server checks the bytes again). */
export const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;
export type ImageType = (typeof IMAGE_TYPES)[number];
/** The file input's `accept`. */
export const IMAGE_ACCEPT = IMAGE_TYPES.join(",");
/** The largest image the composer takes (the server's default `--max-image-bytes`). */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

const EXT: Record<ImageType, string> = { "image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp" };

export function isImageType(t: string): t is ImageType {
  return (IMAGE_TYPES as readonly string[]).includes(t);
}

/** A size for a person: "812 B", "4.2 KiB", "5 MiB". */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const [v, unit] = n < 1024 * 1024 ? [n / 1024, "KiB"] : [n / (1024 * 1024), "MiB"];
  const s = v >= 100 ? v.toFixed(0) : v.toFixed(1);
  return `${s.replace(/\.0$/, "")} ${unit}`;
}

/** Why the composer refuses a file (`null`: it takes it): not one of the four image types, or too large. */
export function refuseImage(f: { name: string; type: string; size: number }, max: number = MAX_IMAGE_BYTES): string | null {
  const name = `“${showControls(f.name || "the pasted file")}”`;
  if (!isImageType(f.type)) return `${name} is not a PNG, JPEG, GIF or WebP image: only those can be attached.`;
  if (f.size > max) {
    // Just over the limit, rounded sizes would read the same: then the bytes are said.
    const [size, limit] = formatBytes(f.size) === formatBytes(max) ? [`${f.size} bytes`, `${formatBytes(max)} (${max} bytes)`] : [formatBytes(f.size), formatBytes(max)];
    return `${name} is ${size}: an image may be at most ${limit}.`;
  }
  return null;
}

/** The name an attached image is sent with: its file name, or `pasted-image-N.png` for one without. */
export function imageName(f: { name: string; type: string }, n: number): string {
  const name = f.name.trim();
  if (name) return name;
  return `pasted-image-${n}.${isImageType(f.type) ? EXT[f.type] : "png"}`;
}

/** Bytes as base64 (standard alphabet, padded), in chunks (no argument-count limit on large images). */
export function toBase64(bytes: Uint8Array): string {
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

/** An image ready to send. */
export interface OutgoingImage {
  name: string;
  mimeType: ImageType;
  /** base64 */
  data: string;
}

/** A turn's input: the text (when not blank) first, then the images, in the order they were attached. */
export function turnInput(text: string, images: OutgoingImage[]): InputItem[] {
  const input: InputItem[] = [];
  if (text.trim()) input.push({ type: "text", text });
  for (const i of images) input.push({ type: "image", data: i.data, mimeType: i.mimeType, name: i.name });
  return input;
}

/** An image of a turn as events carry it (never its data). */
export interface ImageRef {
  attachment: string | null;
  mimeType: string | null;
  bytes: number | null;
  name: string | null;
  path: string | null;
}

/** A file of a turn (inside the session's workspace). */
export interface FileRef {
  path: string;
  bytes: number | null;
  mimeType: string | null;
}

/** A turn's (or a steer's) input split into its text (text items, a line each), images and files. */
export function inputParts(input: readonly InputItem[] | null | undefined): { text: string; images: ImageRef[]; files: FileRef[] } {
  const text: string[] = [];
  const images: ImageRef[] = [];
  const files: FileRef[] = [];
  for (const i of input ?? []) {
    if (i.type === "text") {
      if (i.text) text.push(i.text);
    } else if (i.type === "image") {
      images.push({ attachment: i.attachment ?? null, mimeType: i.mimeType ?? null, bytes: i.bytes ?? null, name: i.name ?? null, path: i.path ?? null });
    } else if (i.type === "file") {
      files.push({ path: i.path, bytes: i.bytes ?? null, mimeType: i.mimeType ?? null });
    }
  }
  return { text: text.join("\n"), images, files };
}

/** How an image of a turn is named: its name, else the file it was read from, else "image". */
export function imageLabel(i: ImageRef): string {
  return i.name?.trim() || i.path?.trim() || "image";
}

/** The line under a thumbnail: "shot.png · 4.2 KiB". */
export function imageCaption(i: ImageRef): string {
  return i.bytes != null ? `${imageLabel(i)} · ${formatBytes(i.bytes)}` : imageLabel(i);
}

/** A file chip: "src/main.rs · 1.2 KiB". */
export function fileChipText(f: FileRef): string {
  return f.bytes != null ? `${f.path} · ${formatBytes(f.bytes)}` : f.path;
}

/** The names of a turn's input items by index (null for text): what `input[N]` in a refusal stands for. */
export function inputNames(input: readonly InputItem[]): (string | null)[] {
  return input.map((i) => (i.type === "image" ? (i.name ?? i.path ?? "image") : i.type === "file" ? i.path : null));
}

/** Whether a refusal of a turn is about its images or files (shown beside them, not as a banner). */
export function aboutAttachments(code: string, message: string, input: readonly InputItem[]): boolean {
  if (!input.some((i) => i.type !== "text")) return false;
  if (code === "input_unsupported" || code === "payload_too_large") return true;
  const m = /^input\[(\d+)\]/.exec(message);
  return code === "invalid_input" && m !== null && input[Number(m[1])]?.type !== "text";
}

/**
 * A refusal of a turn with images, for the composer: `input[N]` at its start becomes the image's
 * name; a body over the server's limit says what to do.
 */
export function attachmentErrorText(code: string, message: string, input: readonly InputItem[]): string {
  if (code === "payload_too_large") return `Not sent: the images are too large together for one message; send fewer at a time. ${message}`;
  const names = inputNames(input);
  const said = message.replace(/^input\[(\d+)\]/, (whole, n: string) => {
    const name = names[Number(n)];
    return name ? `“${showControls(name)}”` : whole;
  });
  return `Not sent: ${said}`;
}
