// Images in the console: attached by paste (a ClipboardEvent carrying a PNG), by drag and drop onto
// the composer and with the "Attach image" button (its file chooser); one removed before sending;
// sent as image items after the text (the scripted agent says what it received), shown in the turn
// as thumbnails read from the attachment route with the token (blob: URLs, so the console's CSP
// must allow `img-src blob:`), the whole image in a dialog; an image in a steer; a turn's files (and
// an image by path) sent over REST as chips. Refused before sending: a file that is not PNG, JPEG,
// GIF or WebP, an image over 5 MiB; refused by the server: an image over its --max-image-bytes (400
// invalid_input, maxBytes) and any image for an agent that takes none (422 input_unsupported, the
// small Node ACP agent of support/acp-permission-agent.mjs, which says nothing of images).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync, crc32 } from 'node:zlib';
import { after, test } from 'node:test';
import { send, sessionStatus, shots, startSession, tid, unnamed, useConsole } from '../support/console.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'ensemble-web-images-'));
const providers = join(dir, 'providers.toml');
writeFileSync(
  providers,
  `[[provider]]\nid = "no-images-acp"\nkind = "acp"\nname = "Agent without images"\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(join(here, '../support/acp-permission-agent.mjs'))}]\n`,
);
// The server's own image limit, below the console's 5 MiB: its 400 (maxBytes) is seen with a small image.
const SERVER_MAX_IMAGE = 8192;
const h = useConsole({ serverOptions: { extraArgs: ['--providers', providers, '--max-image-bytes', String(SERVER_MAX_IMAGE)] } });
after(() => rmSync(dir, { recursive: true, force: true }));
const view = tid('session-view');

/** A real PNG of `w`×`h` pixels (RGB, 8 bits): `fill(x, y)` gives each pixel's [r, g, b]. */
function png(w, h, fill) {
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(td) >>> 0);
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const raw = Buffer.alloc(h * (1 + 3 * w));
  for (let y = 0; y < h; y++) {
    raw[y * (1 + 3 * w)] = 0;
    for (let x = 0; x < w; x++) raw.set(fill(x, y), y * (1 + 3 * w) + 1 + 3 * x);
  }
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}
const solid = (w, h, rgb) => png(w, h, () => rgb);
/** Random pixels, which do not compress: a PNG larger than its few pixels suggest. */
const noisy = (w, h) => png(w, h, () => randomBytes(3));

/** Dispatches, in the page, a paste of a file on the composer (as a screenshot's paste is). */
function paste(page, name, type, bytes) {
  return page.evaluate(
    ({ sel, name, type, b64 }) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([bytes], name, { type }));
      document.querySelector(sel).dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
    },
    { sel: `${view} ${tid('composer')}`, name, type, b64: Buffer.from(bytes).toString('base64') },
  );
}

/**
 * Drags files over the composer (dragenter, dragover: the composer must take them and show it), then
 * drops them there, in the page.
 */
async function drop(page, files) {
  const over = await page.evaluate(
    ({ sel, files }) => {
      const dt = new DataTransfer();
      for (const f of files) dt.items.add(new File([Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0))], f.name, { type: f.type }));
      window.dragged = dt;
      const target = document.querySelector(sel);
      return ['dragenter', 'dragover'].map((type) => {
        const ev = new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true });
        target.dispatchEvent(ev);
        return ev.defaultPrevented;
      });
    },
    { sel: `${view} ${tid('composer')}`, files: files.map((f) => ({ name: f.name, type: f.type, b64: Buffer.from(f.bytes).toString('base64') })) },
  );
  assert.deepEqual(over, [true, true], 'the composer takes a drag of files');
  await page.waitForSelector(`${view} ${tid('composer-form')}.dropping`);
  const dropped = await page.evaluate((sel) => {
    const ev = new DragEvent('drop', { dataTransfer: window.dragged, bubbles: true, cancelable: true });
    document.querySelector(sel).dispatchEvent(ev);
    return ev.defaultPrevented;
  }, `${view} ${tid('composer')}`);
  assert.ok(dropped, 'the drop is the composer\'s (the browser does not open the file)');
  await page.waitForSelector(`${view} ${tid('composer-form')}:not(.dropping)`);
}

/** Picks files with the Attach image button's file chooser. */
async function pick(page, files) {
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.click(`${view} ${tid('attach-image')}`)]);
  assert.ok(chooser.isMultiple(), 'several images may be picked at once');
  await chooser.setFiles(files.map((f) => ({ name: f.name, mimeType: f.type, buffer: Buffer.from(f.bytes) })));
}

const pendingNames = (page) => page.$$eval(`${view} ${tid('pending-attachment')}`, (els) => els.map((e) => e.dataset.name));
const naturalWidths = (page, sel) => page.$$eval(sel, (els) => els.map((e) => (e.complete ? e.naturalWidth : 0)));

test('paste, drop and pick images, remove one, send: the reply names them, the turn shows them from the attachment route', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'img' });
  // The thumbnails are blob: URLs (the attachment route needs the token, which an <img> cannot send).
  const csp = await page.evaluate(async () => (await fetch('/')).headers.get('content-security-policy'));
  assert.match(csp, /img-src 'self' blob:(;|$)/, `the console's CSP must allow blob: images (img-src 'self' blob:): ${csp}`);
  const attachmentRequests = [];
  page.on('request', (r) => {
    if (r.url().includes('/attachments/')) attachmentRequests.push(r);
  });
  await startSession(page, 'i1');
  await sessionStatus(page, 'i1', 'ready');

  const pasted = solid(3, 2, [220, 30, 30]);
  const dropped = solid(5, 5, [30, 200, 30]);
  const picked = solid(4, 4, [30, 30, 220]);
  await paste(page, 'pasted.png', 'image/png', pasted);
  await page.waitForFunction((sel) => document.querySelectorAll(sel).length === 1, `${view} ${tid('pending-attachment')}`);
  assert.equal(await page.inputValue(`${view} ${tid('composer')}`), '', 'a pasted image is not pasted as text');
  await drop(page, [{ name: 'dropped.png', type: 'image/png', bytes: dropped }]);
  await pick(page, [{ name: 'picked.png', type: 'image/png', bytes: picked }]);
  await page.waitForFunction((sel) => document.querySelectorAll(sel).length === 3, `${view} ${tid('pending-attachment')}`);
  assert.deepEqual(await pendingNames(page), ['pasted.png', 'dropped.png', 'picked.png']);
  await page.waitForFunction((sel) => [...document.querySelectorAll(sel)].every((i) => i.complete && i.naturalWidth > 0), `${view} ${tid('pending-attachment-img')}`);
  assert.deepEqual(await naturalWidths(page, `${view} ${tid('pending-attachment-img')}`), [3, 5, 4]);

  // Removed before sending: gone from the composer, never sent.
  await page.click(`${view} ${tid('pending-attachment')}[data-name="dropped.png"] ${tid('remove-attachment')}`);
  assert.deepEqual(await pendingNames(page), ['pasted.png', 'picked.png']);
  assert.deepEqual(await unnamed(page), [], 'every control of the composer has a name');

  await send(page, 'two pictures');
  await page.waitForSelector(`${view} ${tid('pending-attachments')}`, { state: 'detached' });
  const reply = `${view} ${tid('message')}[data-done="true"]`;
  await page.waitForSelector(`${reply}:has-text("You sent an image named picked.png")`);
  const said = await page.textContent(reply);
  assert.ok(said.includes(`You sent an image named pasted.png (image/png, ${pasted.length} bytes).`), said);
  assert.ok(said.includes(`You sent an image named picked.png (image/png, ${picked.length} bytes).`), said);
  assert.ok(said.includes('You said: two pictures'), said);
  assert.ok(!said.includes('dropped.png'), said);

  // The log: the text first, then the two images in order, kept by the server (no data in events).
  const started = (await h.rest.events('img')).data.find((e) => e.type === 'turn.started');
  const input = started.payload.input;
  assert.deepEqual(input.map((i) => [i.type, i.name ?? i.text]), [['text', 'two pictures'], ['image', 'pasted.png'], ['image', 'picked.png']]);
  for (const i of input.slice(1)) {
    assert.equal(i.data, undefined);
    assert.equal(i.mimeType, 'image/png');
    assert.match(i.attachment, /^[0-9a-f]{64}\.png$/);
  }
  assert.equal(input[1].bytes, pasted.length);

  // The turn's thumbnails: read from …/attachments/{attachment} with the token, shown from blob: URLs.
  const thumbs = `${view} ${tid('user-message')} ${tid('turn-image')}`;
  await page.waitForFunction((sel) => {
    const imgs = [...document.querySelectorAll(sel)];
    return imgs.length === 2 && imgs.every((i) => i.complete && i.naturalWidth > 0);
  }, `${thumbs} ${tid('turn-image-img')}`);
  assert.deepEqual(await naturalWidths(page, `${thumbs} ${tid('turn-image-img')}`), [3, 4]);
  assert.deepEqual(await page.$$eval(thumbs, (els) => els.map((e) => e.dataset.attachment)), [input[1].attachment, input[2].attachment]);
  assert.ok((await page.$$eval(`${thumbs} img`, (els) => els.map((e) => e.src))).every((s) => s.startsWith('blob:')));
  assert.match(await page.textContent(`${thumbs}[data-name="pasted.png"]`), new RegExp(`pasted\\.png · ${pasted.length} B`));
  const fetched = attachmentRequests.map((r) => new URL(r.url()).pathname);
  for (const i of input.slice(1)) assert.ok(fetched.includes(`/v1/rooms/img/sessions/i1/attachments/${i.attachment}`), JSON.stringify(fetched));
  for (const r of attachmentRequests) assert.equal(r.headers().authorization, `Bearer ${h.server.token}`);

  // Clicked: the whole image in a dialog; Escape closes it and the focus is back on the thumbnail.
  await page.click(`${thumbs}[data-name="picked.png"] ${tid('open-image')}`);
  await page.waitForSelector(`${tid('image-dialog')}[open]`);
  await page.waitForFunction((sel) => document.querySelector(sel)?.naturalWidth === 4, `${tid('image-dialog')} ${tid('image-dialog-img')}`);
  assert.match(await page.getAttribute(`${tid('image-dialog')} ${tid('image-save')}`, 'href'), /^blob:/);
  assert.equal(await page.getAttribute(`${tid('image-dialog')} ${tid('image-save')}`, 'download'), 'picked.png');
  assert.deepEqual(await unnamed(page), [], 'the dialog has no control without a name');
  await shots(page, 'images-dialog');
  await page.keyboard.press('Escape');
  await page.waitForSelector(tid('image-dialog'), { state: 'detached' });
  assert.equal(await page.evaluate(() => document.activeElement?.closest('[data-testid="turn-image"]')?.dataset.name), 'picked.png');
  await shots(page, 'images-turn');
  page.assertClean();
});

test('an image in a steer, and a turn with a file and an image by path (over REST): thumbnails and chips', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'img2' });
  await startSession(page, 'i2');
  await sessionStatus(page, 'i2', 'ready');
  await send(page, '/slow 50\n/chunks 60');
  await page.waitForSelector(`${view} ${tid('steer')}`);
  const steerImage = solid(6, 3, [200, 200, 0]);
  await paste(page, 'steer.png', 'image/png', steerImage);
  await page.fill(`${view} ${tid('composer')}`, 'and look at this');
  await page.keyboard.press('Control+Enter');
  const steer = `${view} ${tid('user-message')}[data-steer="true"]`;
  await page.waitForSelector(`${steer}:has-text("and look at this")`);
  await page.waitForFunction((sel) => document.querySelector(sel)?.naturalWidth === 6, `${steer} ${tid('turn-image-img')}`);
  const steered = (await h.rest.events('img2')).data.find((e) => e.type === 'turn.steered');
  assert.deepEqual(steered.payload.input.map((i) => i.type), ['text', 'image']);
  await sessionStatus(page, 'i2', 'ready');

  // A file and an image named by path in the session's workspace (its cwd, the server's default).
  writeFileSync(join(h.server.workspace, 'notes.md'), '# notes\nline two\n');
  const onDisk = solid(7, 2, [0, 120, 200]);
  writeFileSync(join(h.server.workspace, 'diagram.png'), onDisk);
  await h.rest.call('POST', '/v1/rooms/img2/sessions/i2/turns', { input: [{ type: 'file', path: 'notes.md' }, { type: 'image', path: 'diagram.png' }] }, 202);
  const last = `${view} ${tid('user-message')}:not([data-steer]) >> nth=-1`;
  await page.waitForSelector(`${view} ${tid('turn-file')}[data-path="notes.md"]`);
  assert.equal((await page.textContent(`${view} ${tid('turn-file')}[data-path="notes.md"]`)).trim(), '📄 notes.md · 17 B');
  await page.waitForFunction((sel) => [...document.querySelectorAll(sel)].some((i) => i.naturalWidth === 7), `${view} ${tid('turn-image-img')}`);
  assert.match(await page.locator(last).locator(tid('turn-image')).textContent(), new RegExp(`diagram\\.png · ${onDisk.length} B`));
  await page.waitForSelector(`${view} ${tid('message')}[data-done="true"]:has-text("You sent the file notes.md")`);
  page.assertClean();
});

test('refused before sending: not one of the four image types, over 5 MiB; the others are taken', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'img3' });
  await startSession(page, 'i3');
  await sessionStatus(page, 'i3', 'ready');
  const error = `${view} ${tid('attach-error')}`;
  assert.equal(await page.getAttribute(`${view} ${tid('attach-input')}`, 'accept'), 'image/png,image/jpeg,image/gif,image/webp');

  await pick(page, [{ name: 'notes.txt', type: 'text/plain', bytes: Buffer.from('hello') }]);
  await page.waitForSelector(error);
  assert.equal(await page.textContent(error), '“notes.txt” is not a PNG, JPEG, GIF or WebP image: only those can be attached.');
  assert.equal(await page.getAttribute(error, 'role'), 'alert');
  assert.deepEqual(await pendingNames(page), []);

  const big = Buffer.alloc(5 * 1024 * 1024 + 1);
  solid(1, 1, [0, 0, 0]).copy(big);
  await pick(page, [{ name: 'big.png', type: 'image/png', bytes: big }]);
  await page.waitForSelector(`${error}:has-text("big.png")`);
  assert.equal(await page.textContent(error), '“big.png” is 5242881 bytes: an image may be at most 5 MiB (5242880 bytes).');
  assert.deepEqual(await pendingNames(page), []);

  // Dropped together: the SVG is refused, the GIF taken (a drop of one kind does not cost the other).
  const gif = Buffer.from('R0lGODlhAQABAIAAAP///wAAACwAAAAAAQABAAACAkQBADs=', 'base64');
  await drop(page, [{ name: 'logo.svg', type: 'image/svg+xml', bytes: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>') }, { name: 'dot.gif', type: 'image/gif', bytes: gif }]);
  await page.waitForSelector(`${error}:has-text("logo.svg")`);
  assert.deepEqual(await pendingNames(page), ['dot.gif']);
  // The next pick that is all taken clears the message.
  await pick(page, [{ name: 'ok.png', type: 'image/png', bytes: solid(2, 2, [9, 9, 9]) }]);
  await page.waitForSelector(error, { state: 'detached' });
  assert.deepEqual(await pendingNames(page), ['dot.gif', 'ok.png']);
  assert.equal((await h.rest.events('img3')).data.filter((e) => e.type === 'turn.started').length, 0, 'nothing was sent');

  // Over the server's own limit (--max-image-bytes 8192 here): its 400 is shown beside the images,
  // named; the images and the text stay for another try.
  const large = noisy(60, 60);
  assert.ok(large.length > SERVER_MAX_IMAGE && large.length < 5 * 1024 * 1024);
  await pick(page, [{ name: 'large.png', type: 'image/png', bytes: large }]);
  await page.fill(`${view} ${tid('composer')}`, 'three images');
  await page.click(`${view} ${tid('send')}`);
  await page.waitForSelector(`${error}:has-text("invalid_input")`);
  assert.equal(await page.textContent(error), `Not sent: “large.png”: the image is larger than the limit of ${SERVER_MAX_IMAGE} bytes (8 KiB) (400 invalid_input)`);
  assert.deepEqual(await pendingNames(page), ['dot.gif', 'ok.png', 'large.png']);
  assert.equal(await page.inputValue(`${view} ${tid('composer')}`), 'three images');
  assert.equal(await page.$$eval(tid('app-message'), (els) => els.length), 0, 'said beside the images, not as a banner');
  await shots(page, 'images-refused');
  // Without it the turn goes.
  await page.click(`${view} ${tid('pending-attachment')}[data-name="large.png"] ${tid('remove-attachment')}`);
  await page.click(`${view} ${tid('send')}`);
  await page.waitForSelector(`${view} ${tid('message')}[data-done="true"]:has-text("You sent an image named dot.gif (image/gif, ${gif.length} bytes).")`);
  await page.waitForSelector(error, { state: 'detached' });
  page.assertClean([/status of 400/]);
});

test('an agent that takes no images: 422 input_unsupported shown beside the image, nothing sent', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'img4' });
  await page.click(tid('new-session'));
  await page.waitForSelector(`${tid('provider-select')} option[value="no-images-acp"]:not([disabled])`, { state: 'attached' });
  await startSession(page, 'n1', { 'provider-select': 'no-images-acp' });
  await sessionStatus(page, 'n1', 'ready');
  await pick(page, [{ name: 'photo.png', type: 'image/png', bytes: solid(2, 2, [1, 2, 3]) }]);
  await page.fill(`${view} ${tid('composer')}`, 'what is this?');
  await page.click(`${view} ${tid('send')}`);
  const error = `${view} ${tid('attach-error')}`;
  await page.waitForSelector(`${error}:has-text("input_unsupported")`);
  const text = await page.textContent(error);
  assert.match(text, /^Not sent: “photo\.png” is an image: the agent of `no-images-acp` takes no images/, text);
  assert.match(text, /\(422 input_unsupported\)$/, text);
  assert.deepEqual(await pendingNames(page), ['photo.png'], 'the image stays, to be removed');
  assert.equal(await page.inputValue(`${view} ${tid('composer')}`), 'what is this?');
  assert.equal((await h.rest.events('img4')).data.filter((e) => e.type === 'turn.started').length, 0, 'no turn started');
  await sessionStatus(page, 'n1', 'ready');
  page.assertClean([/status of 422/]);
});
