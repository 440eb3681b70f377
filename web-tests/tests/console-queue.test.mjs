// The queue of follow-ups under the composer, browser notifications and the tab title's count.
//
// Queue: behind a long scripted turn (`/slow 100` + `/chunks 300`: 30 s unless canceled), four
// follow-ups queued with the Queue button and Alt+Enter; a fifth refused (`--max-queued-turns 4`:
// 409 queue_full, said beside the composer, the text kept); moved up and down (PUT …/queue: the
// server's order, the focus kept on the moved one's button), one edited in place (PATCH: its image
// kept), one removed (DELETE), one sent now (POST …/send: the scripted agent steers, so a
// `turn.steered` with its text, shown as a steer in the transcript); then the running turn is canceled and
// the two left start in their order, as the turn ids they were queued with. With an ACP agent that
// cannot steer, Ctrl+Enter queues, and Send now cancels the running turn and starts that one.
// A long queued text shows its beginning and its size (the events carry no more); its edit starts
// from the whole text, read from GET …/queue.
// Title: "(N) Ensemble console" while N sessions (in any watched room) wait on an answer.
// Notifications: the page's `Notification` is replaced by an init script with a recorder (its
// permission is the browser's: granted with `context.grantPermissions(['notifications'])`, else
// "default"; `requestPermission` records whether a user gesture was active), and the page's
// visibility is the init script's too (`document.visibilityState` overridden, `visibilitychange`
// dispatched). The prompt asks only on its button's click, "Not now" is remembered; hidden, a
// finished turn in the open room and an approval in another watched room are notified (a replayed
// log and a visible tab are not); clicking the notification opens that room and session.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { deflateSync, crc32 } from 'node:zlib';
import { after, test } from 'node:test';
import { send, sessionStatus, shots, startSession, tid, unnamed, useConsole, VIEWPORTS } from '../support/console.mjs';
import { ENSEMBLE_BIN } from '../support/server.mjs';
import { waitFor } from '../support/api.mjs';

const agent = join(dirname(ENSEMBLE_BIN), 'ensemble-acp-test-agent');
assert.ok(existsSync(agent), `the ACP test agent is missing at ${agent}: run cargo build -p ensemble-acp-test-agent`);
const dir = mkdtempSync(join(tmpdir(), 'ensemble-web-queue-'));
const providers = join(dir, 'providers.toml');
writeFileSync(providers, `[[provider]]\nid = "test-acp"\nkind = "acp"\nname = "Test ACP agent"\ncommand = ${JSON.stringify(agent)}\n`);
const MAX_QUEUED = 4;
const h = useConsole({ serverOptions: { extraArgs: ['--providers', providers, '--max-queued-turns', String(MAX_QUEUED)] } });
after(() => rmSync(dir, { recursive: true, force: true }));
const view = tid('session-view');
const BASE_TITLE = 'Ensemble console';

/** A real 2×2 PNG. */
function png() {
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(td) >>> 0);
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(2, 0);
  ihdr.writeUInt32BE(2, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const raw = Buffer.from([0, 200, 0, 0, 200, 0, 0, 0, 200, 0, 0, 200, 0, 0]);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

const queuedTexts = (page) => page.$$eval(`${view} ${tid('queued-turn')} ${tid('queued-text')}`, (els) => els.map((e) => e.textContent));
const queuedIds = (page) => page.$$eval(`${view} ${tid('queued-turn')}`, (els) => els.map((e) => e.dataset.turn));
/** Waits until the queue under the composer shows exactly `texts`, in that order. */
function queueIs(page, texts) {
  return page.waitForFunction(
    ({ sel, texts }) => JSON.stringify([...document.querySelectorAll(sel)].map((e) => e.textContent)) === JSON.stringify(texts),
    { sel: `${view} ${tid('queued-turn')} ${tid('queued-text')}`, texts },
  );
}
const item = (text) => `${view} ${tid('queued-turn')}:has(${tid('queued-text')}:text-is(${JSON.stringify(text)}))`;
const restQueue = async (room, session) => (await h.rest.call('GET', `/v1/rooms/${room}/sessions/${session}/queue`, undefined, 200)).json.data;
const textOf = (q) => q.input.filter((i) => i.type === 'text').map((i) => i.text).join('\n');
const reasons = async (room) => (await h.rest.events(room)).data.filter((e) => e.type === 'queue.updated').map((e) => e.payload.reason);

test('queue four follow-ups, one refused as full; reorder, edit, remove, send one now (steered); the rest start in order', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'q' });
  await startSession(page, 'q1');
  await sessionStatus(page, 'q1', 'ready');
  await send(page, '/slow 100\n/chunks 300');
  await page.waitForSelector(`${view} ${tid('steer')}`);
  // While the turn runs: Steer (the primary: Ctrl+Enter), Queue, Cancel; no Send.
  assert.ok(await page.$(`${view} ${tid('queue-turn')}`));
  assert.equal(await page.$(`${view} ${tid('send')}`), null);
  assert.match(await page.getAttribute(`${view} ${tid('composer')}`, 'placeholder'), /Ctrl\+Enter steers it, Alt\+Enter queues/);

  const composer = `${view} ${tid('composer')}`;
  // With the Queue button; the second with an image (pasted), which an edit keeps.
  await page.fill(composer, 'alpha');
  await page.click(`${view} ${tid('queue-turn')}`);
  await queueIs(page, ['alpha']);
  await page.evaluate(
    ({ sel, b64 }) => {
      const dt = new DataTransfer();
      dt.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], 'dot.png', { type: 'image/png' }));
      document.querySelector(sel).dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
    },
    { sel: composer, b64: png().toString('base64') },
  );
  await page.fill(composer, 'bravo');
  // Alt+Enter queues (Enter alone is a new line, Ctrl+Enter would steer).
  await page.focus(composer);
  await page.keyboard.press('Alt+Enter');
  await queueIs(page, ['alpha', 'bravo']);
  // Emptied once the server said queued (its event may show the queue a moment before).
  await page.waitForFunction((sel) => document.querySelector(sel).value === '', composer);
  await page.waitForSelector(`${view} ${tid('pending-attachment')}`, { state: 'detached' });
  for (const t of ['charlie', 'delta']) {
    await page.fill(composer, t);
    await page.click(`${view} ${tid('queue-turn')}`);
  }
  await queueIs(page, ['alpha', 'bravo', 'charlie', 'delta']);
  // bravo's image, read from the attachment route like a turn's.
  await page.waitForFunction(() => {
    const li = [...document.querySelectorAll('[data-testid="queued-turn"]')].find((e) => e.querySelector('[data-testid="queued-text"]')?.textContent === 'bravo');
    return li?.querySelector('[data-testid="turn-image-img"]')?.naturalWidth === 2;
  });

  // A fifth is refused: the queue is full (the server's message beside the composer, the text kept).
  await page.fill(composer, 'echo');
  await page.click(`${view} ${tid('queue-turn')}`);
  const error = `${view} ${tid('queue-error')}`;
  await page.waitForSelector(`${error}:has-text("queue_full")`);
  assert.match(await page.textContent(error), /^Not queued: .*\(409 queue_full\)/);
  assert.equal(await page.getAttribute(error, 'role'), 'alert');
  assert.equal(await page.inputValue(composer), 'echo');
  await page.fill(composer, '');

  const ids = Object.fromEntries((await restQueue('q', 'q1')).map((q) => [textOf(q), q.turnId]));
  assert.deepEqual(await queuedIds(page), [ids.alpha, ids.bravo, ids.charlie, ids.delta]);
  assert.deepEqual(await unnamed(page), [], 'every control of the queue has a name');
  await shots(page, 'queue');

  // charlie up (before bravo): the server's order, and the focus stays on charlie's ↑.
  await page.click(`${item('charlie')} ${tid('queued-up')}`);
  await queueIs(page, ['alpha', 'charlie', 'bravo', 'delta']);
  await page.waitForFunction((id) => document.activeElement?.closest('[data-testid="queued-turn"]')?.dataset.turn === id && document.activeElement.dataset.testid === 'queued-up', ids.charlie);
  assert.deepEqual((await restQueue('q', 'q1')).map(textOf), ['alpha', 'charlie', 'bravo', 'delta']);
  // alpha down (after charlie).
  await page.click(`${item('alpha')} ${tid('queued-down')}`);
  await queueIs(page, ['charlie', 'alpha', 'bravo', 'delta']);
  assert.equal(await page.getAttribute(`${view} ${tid('queued-turn')} >> nth=0 >> ${tid('queued-up')}`, 'disabled'), '', 'the first cannot go up');

  // bravo edited in place (Escape would keep it): its image stays.
  await page.click(`${item('bravo')} ${tid('queued-edit')}`);
  const editor = `${view} ${tid('queued-edit-input')}`;
  await page.waitForFunction((sel) => document.activeElement === document.querySelector(sel), editor);
  assert.equal(await page.inputValue(editor), 'bravo');
  await page.fill(editor, 'bravo, edited');
  await page.click(`${view} ${tid('queued-edit-save')}`);
  await queueIs(page, ['charlie', 'alpha', 'bravo, edited', 'delta']);
  const edited = (await restQueue('q', 'q1')).find((q) => q.turnId === ids.bravo);
  assert.deepEqual(edited.input.map((i) => [i.type, i.text ?? i.name]), [['text', 'bravo, edited'], ['image', 'dot.png']]);
  assert.equal(edited.input[1].bytes, png().length, 'the same image, sent again');
  await page.waitForFunction((id) => document.activeElement?.closest('[data-testid="queued-turn"]')?.dataset.turn === id, ids.bravo);

  // alpha removed.
  await page.click(`${item('alpha')} ${tid('queued-remove')}`);
  await queueIs(page, ['charlie', 'bravo, edited', 'delta']);

  // charlie sent now: steered into the running turn.
  await page.click(`${item('charlie')} ${tid('queued-send')}`);
  await queueIs(page, ['bravo, edited', 'delta']);
  const steered = await waitFor(async () => (await h.rest.events('q')).data.find((e) => e.type === 'turn.steered'), { what: 'turn.steered' });
  assert.deepEqual(steered.payload.input, [{ type: 'text', text: 'charlie' }]);
  await page.waitForSelector(`${view} ${tid('user-message')}[data-steer="true"]:has-text("charlie")`);

  // The running turn ends (canceled here, not to wait 30 s): the two left start in their order.
  await page.click(`${view} ${tid('cancel')}`);
  await page.waitForSelector(`${view} ${tid('message')}[data-done="true"]:has-text("You said: delta")`);
  await page.waitForSelector(`${view} ${tid('queue')}`, { state: 'detached' });
  await sessionStatus(page, 'q1', 'ready');
  const started = (await h.rest.events('q')).data.filter((e) => e.type === 'turn.started').map((e) => e.payload.turnId);
  assert.deepEqual(started.slice(1), [ids.bravo, ids.delta], 'started as the turn ids they were queued with, in order');
  const said = await page.$$eval(`${view} ${tid('message')}[data-done="true"]`, (els) => els.map((e) => e.textContent));
  assert.ok(said.findIndex((t) => t.includes('You said: bravo, edited')) < said.findIndex((t) => t.includes('You said: delta')), JSON.stringify(said));
  assert.deepEqual(await reasons('q'), ['queued', 'queued', 'queued', 'queued', 'reordered', 'reordered', 'edited', 'removed', 'sent', 'started', 'started']);
  page.assertClean([/status of 409/]);
});

test('an agent that cannot steer: Ctrl+Enter queues, Send now cancels the running turn and starts that one', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'qa' });
  await page.click(tid('new-session'));
  await page.waitForSelector(`${tid('provider-select')} option[value="test-acp"]:not([disabled])`, { state: 'attached' });
  await startSession(page, 'a1', { 'provider-select': 'test-acp' });
  await sessionStatus(page, 'a1', 'ready');
  await send(page, 'slow');
  await page.waitForSelector(`${view} ${tid('cancel')}`);
  assert.equal(await page.$(`${view} ${tid('steer')}`), null, 'no Steer for this agent');
  assert.match(await page.getAttribute(`${view} ${tid('composer')}`, 'placeholder'), /Ctrl\+Enter queues a follow-up/);
  for (const t of ['one', 'two']) {
    await page.fill(`${view} ${tid('composer')}`, t);
    await page.keyboard.press('Control+Enter');
    await page.waitForSelector(item(t));
  }
  await queueIs(page, ['one', 'two']);
  // Send now says what it does with this agent.
  assert.match(await page.getAttribute(`${item('two')} ${tid('queued-send')}`, 'title'), /the running turn is canceled/);
  await page.click(`${item('two')} ${tid('queued-send')}`);
  await page.waitForSelector(`${view} ${tid('message')}[data-done="true"]:has-text("echo: two")`);
  const events = (await h.rest.events('qa')).data;
  assert.ok(events.some((e) => e.type === 'turn.canceled'), 'the running turn was canceled');
  assert.equal(events.filter((e) => e.type === 'turn.steered').length, 0);
  // "one" goes after "two".
  await page.waitForSelector(`${view} ${tid('message')}[data-done="true"]:has-text("echo: one")`);
  await page.waitForSelector(`${view} ${tid('queue')}`, { state: 'detached' });
  page.assertClean();
});

test('a long queued text shows its beginning and size; its edit starts from the whole text', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'ql' });
  await startSession(page, 'l1');
  await sessionStatus(page, 'l1', 'ready');
  await send(page, '/hang');
  await page.waitForSelector(`${view} ${tid('steer')}`);
  // Queued over REST (the composer works the same way): 3000 bytes, of which an event shows 256.
  const long = `long ${'word '.repeat(599)}end`;
  await h.rest.call('POST', '/v1/rooms/ql/sessions/l1/turns', { input: [{ type: 'text', text: long }], queue: true }, 202);
  const shown = `${view} ${tid('queued-turn')} ${tid('queued-text')}`;
  await page.waitForSelector(`${shown} ${tid('queued-more')}`);
  const text = await page.textContent(shown);
  assert.ok(text.startsWith('long word word') && text.length < 300, text);
  assert.match(await page.textContent(`${shown} ${tid('queued-more')}`), /^… \(3 KiB in all\)$/);
  const event = (await h.rest.events('ql')).data.filter((e) => e.type === 'queue.updated').pop();
  assert.equal(event.payload.queue[0].truncated, true);
  assert.equal(event.payload.queue[0].input, undefined, 'no whole input in the event');
  // Edit: the whole text (read from GET …/queue), changed at its end, saved whole.
  await page.click(`${view} ${tid('queued-edit')}`);
  const editor = `${view} ${tid('queued-edit-input')}`;
  await page.waitForFunction((sel) => document.activeElement === document.querySelector(sel), editor);
  assert.equal(await page.inputValue(editor), long);
  await page.fill(editor, long.replace(/end$/, 'finish'));
  await page.click(`${view} ${tid('queued-edit-save')}`);
  await waitFor(async () => textOf((await restQueue('ql', 'l1'))[0]) === long.replace(/end$/, 'finish'), { what: 'the edit saved' });
  await page.click(`${view} ${tid('cancel')}`);
  await page.waitForSelector(`${view} ${tid('message')}[data-done="true"]:has-text("finish")`);
  page.assertClean();
});

test('the tab title counts the sessions waiting on an answer, in every watched room', { timeout: 30_000 }, async () => {
  await h.rest.call('POST', '/v1/rooms/t2/sessions', { sessionId: 'o1' }, 201);
  const page = await h.open({ room: 't1' });
  assert.equal(await page.title(), BASE_TITLE);
  await startSession(page, 'w1');
  await sessionStatus(page, 'w1', 'ready');
  await send(page, '/run make test');
  await sessionStatus(page, 'w1', 'waiting');
  await page.waitForFunction((t) => document.title === t, `(1) ${BASE_TITLE}`);
  // Another room's session (watched, not open) asking too.
  await h.rest.startTurn('t2', 'o1', '/run make lint');
  await page.waitForFunction((t) => document.title === t, `(2) ${BASE_TITLE}`);
  await page.click(`${view} ${tid('decision-accept')}`);
  await page.waitForFunction((t) => document.title === t, `(1) ${BASE_TITLE}`);
  const pending = (await h.rest.interactions('t2', 'o1')).data[0];
  await h.rest.answer('t2', 'o1', pending.requestId, { decision: 'decline' });
  await page.waitForFunction((t) => document.title === t, BASE_TITLE);
  page.assertClean();
});

/**
 * The page's Notification, replaced: notifications are recorded in `window.__notes` (title, options,
 * onclick), `requestPermission` in `window.__asks` (whether a user gesture was active); the
 * permission is the browser's until asked. `document.visibilityState` reads `window.__hidden`
 * (`hidden` from the start when asked to), and `window.focus()` calls are counted.
 */
async function stubbedContext({ grant, hidden = false }) {
  const ctx = await h.browser.newContext({ viewport: VIEWPORTS.desktop });
  h.contexts.push(ctx);
  if (grant) await ctx.grantPermissions(['notifications'], { origin: h.server.baseUrl });
  await ctx.addInitScript((startHidden) => {
    window.__notes = [];
    window.__asks = [];
    window.__focused = 0;
    window.__hidden = startHidden;
    const Real = window.Notification;
    let asked = null;
    class RecordingNotification {
      static get permission() {
        return asked ?? Real.permission;
      }
      static requestPermission() {
        window.__asks.push(navigator.userActivation.isActive);
        asked = 'granted';
        return Promise.resolve(asked);
      }
      constructor(title, options = {}) {
        this.title = title;
        this.options = options;
        this.onclick = null;
        this.closed = false;
        window.__notes.push(this);
      }
      close() {
        this.closed = true;
      }
    }
    window.Notification = RecordingNotification;
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => (window.__hidden ? 'hidden' : 'visible') });
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => window.__hidden });
    const focus = window.focus.bind(window);
    window.focus = () => {
      window.__focused++;
      focus();
    };
  }, hidden);
  return ctx;
}

const setHidden = (page, hidden) =>
  page.evaluate((v) => {
    window.__hidden = v;
    document.dispatchEvent(new Event('visibilitychange'));
  }, hidden);
const notes = (page) => page.evaluate(() => window.__notes.map((n) => ({ title: n.title, body: n.options.body, tag: n.options.tag })));

test('notifications: asked only from the prompt, "Not now" remembered', { timeout: 30_000 }, async () => {
  const ctx = await stubbedContext({ grant: false });
  const page = await h.open({ room: 'np', context: ctx });
  const prompt = tid('notify-prompt');
  await page.waitForSelector(prompt);
  assert.deepEqual(await page.evaluate(() => window.__asks), [], 'nothing asked before the click');
  assert.deepEqual(await unnamed(page), []);
  await page.click(tid('notify-enable'));
  await page.waitForSelector(prompt, { state: 'detached' });
  assert.deepEqual(await page.evaluate(() => window.__asks), [true], 'asked once, from the click (a user gesture)');

  const later = await stubbedContext({ grant: false });
  const other = await h.open({ room: 'np', context: later });
  await other.click(tid('notify-dismiss'));
  await other.waitForSelector(prompt, { state: 'detached' });
  await other.reload();
  await other.waitForSelector(tid('connection-status', '[data-state="live"]'));
  assert.equal(await other.$(prompt), null, 'Not now is remembered');
  assert.deepEqual(await other.evaluate(() => window.__asks), []);
  page.assertClean();
  other.assertClean();
});

test('notifications: while hidden, a finished turn and an approval in another room; the click opens that session', { timeout: 30_000 }, async () => {
  // Two rooms before the page opens: both listed, so both watched.
  await h.rest.call('POST', '/v1/rooms/na/sessions', { sessionId: 'a1' }, 201);
  await h.rest.call('POST', '/v1/rooms/nb/sessions', { sessionId: 'b1', title: 'Builder' }, 201);
  // A turn that ended before the page opened: replayed from the log, never notified.
  await h.rest.startTurn('na', 'a1', 'before');
  await waitFor(async () => (await h.rest.events('na')).data.some((e) => e.type === 'turn.completed'), { what: 'the first turn' });
  const ctx = await stubbedContext({ grant: true, hidden: true });
  const page = await h.open({ room: 'na', session: 'a1', context: ctx });
  await page.waitForSelector(`${view}[data-session="a1"] ${tid('message')}[data-done="true"]:has-text("You said: before")`);
  assert.equal(await page.$(tid('notify-prompt')), null, 'granted already: no prompt');
  await page.waitForSelector(tid('room-item', '[data-room="nb"]'));
  assert.deepEqual(await notes(page), [], 'a replayed log is not notified');

  // Hidden: the open room's turn ends.
  await h.rest.startTurn('na', 'a1', 'while away');
  await page.waitForFunction(() => window.__notes.length === 1);
  // Named by its first turn's words ("before"): it was started without a title.
  assert.deepEqual(await notes(page), [{ title: 'before in room na finished its turn', body: 'The agent is ready for the next message.', tag: 'ensemble:na/a1' }]);
  // Another watched room's session asks.
  await h.rest.startTurn('nb', 'b1', '/run make test');
  await page.waitForFunction(() => window.__notes.length === 2);
  const [, asked] = await notes(page);
  assert.equal(asked.title, 'Builder in room nb needs an answer');
  assert.match(asked.body, /make test/);
  assert.equal(asked.tag, 'ensemble:nb/b1');
  await page.waitForFunction((t) => document.title === t, `(1) ${BASE_TITLE}`);

  // Visible again: nothing more is notified.
  await setHidden(page, false);
  await h.rest.startTurn('na', 'a1', 'while here');
  await page.waitForSelector(`${view} ${tid('message')}[data-done="true"]:has-text("You said: while here")`);
  assert.equal((await notes(page)).length, 2);

  // The approval's notification clicked: the tab is focused and room nb's session b1 is open.
  await page.evaluate(() => window.__notes[1].onclick(new Event('click')));
  await page.waitForSelector(`${view}[data-session="b1"] ${tid('interaction')}[data-state="pending"]`);
  assert.equal(await page.evaluate(() => window.__focused), 1);
  assert.equal(await page.evaluate(() => window.__notes[1].closed), true);
  assert.match(await page.evaluate(() => location.hash), /room=nb&session=b1/);
  await page.click(`${view} ${tid('decision-accept')}`);
  await page.waitForFunction((t) => document.title === t, BASE_TITLE);
  page.assertClean();
});
