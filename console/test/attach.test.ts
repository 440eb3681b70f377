// Unit tests of images and files in a turn: what the composer refuses before sending (type, size),
// the input items it sends, how a turn's and a steer's images and files reach the transcript model,
// and the server's refusals (422 input_unsupported, 400 invalid_input with maxBytes) said with the
// image's name.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  aboutAttachments,
  attachmentErrorText,
  fileChipText,
  formatBytes,
  imageCaption,
  imageName,
  inputParts,
  MAX_IMAGE_BYTES,
  refuseImage,
  toBase64,
  turnInput,
  type InputItem,
} from "../src/attach.js";
import { RoomModel, type Event } from "../src/model.js";
import { errorText, sideName } from "../src/present.js";
import { ev, resetSeq, session } from "./fixtures.js";



const HASH = "ab".repeat(32);

test("attach: sizes read as a person reads them", () => {
  assert.equal(formatBytes(0), "0 B");
  assert.equal(formatBytes(1023), "1023 B");
  assert.equal(formatBytes(1024), "1 KiB");
  assert.equal(formatBytes(4300), "4.2 KiB");
  assert.equal(formatBytes(MAX_IMAGE_BYTES), "5 MiB");
  assert.equal(formatBytes(6.25 * 1024 * 1024), "6.3 MiB");
  assert.equal(formatBytes(200 * 1024), "200 KiB");
});

test("attach: only PNG, JPEG, GIF and WebP up to 5 MiB are taken", () => {
  for (const type of ["image/png", "image/jpeg", "image/gif", "image/webp"]) assert.equal(refuseImage({ name: "a", type, size: 10 }), null, type);
  assert.equal(refuseImage({ name: "edge.png", type: "image/png", size: MAX_IMAGE_BYTES }), null, "exactly the limit is taken");
  assert.equal(refuseImage({ name: "notes.txt", type: "text/plain", size: 10 }), "“notes.txt” is not a PNG, JPEG, GIF or WebP image: only those can be attached.");
  assert.match(refuseImage({ name: "x.svg", type: "image/svg+xml", size: 10 }) ?? "", /is not a PNG, JPEG, GIF or WebP image/);
  assert.match(refuseImage({ name: "", type: "", size: 10 }) ?? "", /^“the pasted file” is not/);
  assert.equal(refuseImage({ name: "big.png", type: "image/png", size: MAX_IMAGE_BYTES + 1 }), "“big.png” is 5242881 bytes: an image may be at most 5 MiB (5242880 bytes).");
  assert.equal(refuseImage({ name: "huge.jpg", type: "image/jpeg", size: 8 * 1024 * 1024 }), "“huge.jpg” is 8 MiB: an image may be at most 5 MiB.");
  // A name that would read backwards shows its controls.
  assert.match(refuseImage({ name: "gnp.\u202Eexe", type: "application/x-msdownload", size: 1 }) ?? "", /⟦U\+202E⟧/);
});

test("attach: a pasted image without a name gets one; base64 as the server decodes it", () => {
  assert.equal(imageName({ name: "shot.png", type: "image/png" }, 1), "shot.png");
  assert.equal(imageName({ name: "  ", type: "image/jpeg" }, 3), "pasted-image-3.jpg");
  assert.equal(imageName({ name: "", type: "image/webp" }, 2), "pasted-image-2.webp");
  for (const n of [0, 1, 2, 3, 100, 0x8000 + 7, 70_000]) {
    const bytes = new Uint8Array(n).map((_, i) => (i * 31 + 7) & 0xff);
    assert.equal(toBase64(bytes), Buffer.from(bytes).toString("base64"), `${n} bytes`);
  }
});

test("attach: the input is the text first, then each image with its type and name", () => {
  const img = { name: "a.png", mimeType: "image/png" as const, data: "iVBORw0K" };
  assert.deepEqual(turnInput("look", [img, { ...img, name: "b.gif", mimeType: "image/gif" }]), [
    { type: "text", text: "look" },
    { type: "image", data: "iVBORw0K", mimeType: "image/png", name: "a.png" },
    { type: "image", data: "iVBORw0K", mimeType: "image/gif", name: "b.gif" },
  ]);
  assert.deepEqual(turnInput("  \n", [img]), [{ type: "image", data: "iVBORw0K", mimeType: "image/png", name: "a.png" }], "no blank text item (the server refuses one)");
  assert.deepEqual(turnInput("only text", []), [{ type: "text", text: "only text" }]);
});

test("model: a turn's and a steer's images and files, beside their text", () => {
  const m = new RoomModel("r", true);
  m.onEvent(ev("s1", "session.started", { session: session("s1") }));
  const input = [
    { type: "text", text: "what is in these?" },
    { type: "image", mimeType: "image/png", bytes: 68, attachment: `${HASH}.png`, name: "dot.png" },
    { type: "image", mimeType: "image/jpeg", bytes: 2048, attachment: `${"cd".repeat(32)}.jpg`, path: "shots/b.jpg" },
    { type: "file", path: "src/main.rs", bytes: 1300, mimeType: "text/plain" },
  ];
  m.onEvent(ev("s1", "turn.started", { turnId: "t1", origin: "user", input }, "t1"));
  m.onEvent(ev("s1", "turn.steered", { turnId: "t1", input: [{ type: "image", mimeType: "image/gif", bytes: 10, attachment: `${"ef".repeat(32)}.gif` }] }, "t1"));
  const items = m.session("s1")!.transcript.items;
  const turn = items.find((i) => i.kind === "turn");
  assert.ok(turn?.kind === "turn");
  assert.equal(turn.text, "what is in these?");
  assert.deepEqual(turn.images, [
    { attachment: `${HASH}.png`, mimeType: "image/png", bytes: 68, name: "dot.png", path: null },
    { attachment: `${"cd".repeat(32)}.jpg`, mimeType: "image/jpeg", bytes: 2048, name: null, path: "shots/b.jpg" },
  ]);
  assert.deepEqual(turn.files, [{ path: "src/main.rs", bytes: 1300, mimeType: "text/plain" }]);
  assert.equal(imageCaption(turn.images[0]!), "dot.png · 68 B");
  assert.equal(imageCaption(turn.images[1]!), "shots/b.jpg · 2 KiB", "an image read from the workspace is named by its path");
  assert.equal(fileChipText(turn.files[0]!), "src/main.rs · 1.3 KiB");
  const steer = items.find((i) => i.kind === "steer");
  assert.ok(steer?.kind === "steer");
  assert.equal(steer.text, "");
  assert.equal(steer.images.length, 1);
  assert.equal(imageCaption(steer.images[0]!), "image · 10 B");
  // A turn of images only has no text (it is still a user turn, not a divider); text-only turns have none.
  const parts = inputParts([{ type: "image", mimeType: "image/png", bytes: 1, attachment: `${HASH}.png` } as InputItem]);
  assert.deepEqual([parts.text, parts.images.length, parts.files.length], ["", 1, 0]);
  assert.deepEqual(inputParts(undefined), { text: "", images: [], files: [] });
});

test("model: a side conversation opened with only an image is named without words", () => {
  const m = new RoomModel("r", true);
  m.onEvent(ev("s1", "session.started", { session: session("s1") }));
  const side = session("side-1", { scope: "side", sourceSessionId: "s1", title: "Side conversation", createdAtMs: 5 });
  m.onSideEvent({ ...ev("side-1", "session.started", { session: side }), seq: 1 } as Event);
  m.onSideEvent({ ...ev("side-1", "turn.started", { turnId: "st1", origin: "user", input: [{ type: "image", mimeType: "image/png", bytes: 1, attachment: `${HASH}.png` }] }, "st1"), seq: 2 } as Event);
  assert.equal(sideName(m, m.session("side-1")!), "Side conversation 1");
});

test("errors: an image over the server's limit and an agent without images, said with the image's name", () => {
  const input: InputItem[] = turnInput("see", [
    { name: "small.png", mimeType: "image/png", data: "AA==" },
    { name: "big.png", mimeType: "image/png", data: "AA==" },
  ]);
  const tooLarge = errorText(400, "invalid_input", "input[2]: the image is larger than the limit of 5242880 bytes", { field: "input[2]", maxBytes: 5242880 });
  assert.equal(tooLarge, "input[2]: the image is larger than the limit of 5242880 bytes (5 MiB) (400 invalid_input)");
  assert.ok(aboutAttachments("invalid_input", tooLarge, input));
  assert.equal(attachmentErrorText("invalid_input", tooLarge, input), "Not sent: “big.png”: the image is larger than the limit of 5242880 bytes (5 MiB) (400 invalid_input)");
  const unsupported = errorText(422, "input_unsupported", "input[1] is an image: the agent of `acp` takes no images (its promptCapabilities.image is false)", null);
  assert.ok(aboutAttachments("input_unsupported", unsupported, input));
  assert.equal(
    attachmentErrorText("input_unsupported", unsupported, input),
    "Not sent: “small.png” is an image: the agent of `acp` takes no images (its promptCapabilities.image is false) (422 input_unsupported)",
  );
  assert.match(attachmentErrorText("payload_too_large", "the request body is 9000000 bytes; the limit is 8388608 (--max-body-bytes) (413 payload_too_large)", input), /^Not sent: the images are too large together for one message; send fewer at a time\./);
  // Not about the images: a text refusal, a turn without images, another code.
  assert.ok(!aboutAttachments("invalid_input", "input[0]: too long (400 invalid_input)", input));
  assert.ok(!aboutAttachments("input_unsupported", "whatever", turnInput("text", [])));
  assert.ok(!aboutAttachments("turn_active", "a turn is running (409 turn_active)", input));
  // A limit in details without the number in the message: said at the end.
  assert.equal(errorText(400, "invalid_input", "too big", { maxBytes: 16 * 1024 * 1024 }), "too big (at most 16 MiB) (400 invalid_input)");
});
