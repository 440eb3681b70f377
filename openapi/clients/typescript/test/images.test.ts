// Images and files in a turn through @ensemble/client: an image sent as data and a file of the
// session's workspace, the scripted agent's description of both, and the kept image read back.

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";

import { Collector, messageText, ok, roomId, type Server, startServer } from "./support.js";

/** A 1×1 PNG. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

describe("images and files in a turn through @ensemble/client", () => {
  let server: Server;
  let room: Collector;
  const roomName = roomId("images");
  const sessionId = "i1";
  const path = { roomId: roomName, sessionId };

  before(async () => {
    server = await startServer();
    room = new Collector(server.roomStream(roomName, { after: 0 }).stream);
  });

  after(async () => {
    room?.stream.close();
    await server?.stop();
  });

  it("sends them, and the image is kept", async () => {
    writeFileSync(`${server.workDir}/notes.md`, "hello notes\n");
    ok(
      await server.client.POST("/v1/rooms/{roomId}/sessions", {
        params: { path: { roomId: roomName } },
        body: { sessionId, cwd: server.workDir },
      }),
      "start",
    );
    const { turnId } = ok(
      await server.client.POST("/v1/rooms/{roomId}/sessions/{sessionId}/turns", {
        params: { path },
        body: {
          input: [
            { type: "text", text: "look" },
            { type: "image", data: PNG, mimeType: "image/png", name: "shot.png" },
            { type: "file", path: "notes.md" },
          ],
        },
      }),
      "submit",
    );
    const started = await room.event("turn.started", (e) => e.turnId === turnId);
    await room.event("turn.completed", (e) => e.turnId === turnId);
    const text = messageText(room.events(), turnId);
    const bytes = Buffer.from(PNG, "base64");
    assert.ok(text.includes(`You sent an image named shot.png (image/png, ${bytes.length} bytes).`), text);
    assert.ok(text.includes("You sent the file notes.md (text/plain, 12 bytes, first line: hello notes)."), text);
    const image = started.payload.input?.[1];
    assert.ok(image?.type === "image" && typeof image.attachment === "string", JSON.stringify(image));
    assert.equal(image.data ?? undefined, undefined, "the data is never sent back");
    const res = await fetch(`${server.baseUrl}/v1/rooms/${roomName}/sessions/${sessionId}/attachments/${image.attachment}`, {
      headers: { authorization: `Bearer ${server.token}` },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "image/png");
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), bytes);
  });
});
