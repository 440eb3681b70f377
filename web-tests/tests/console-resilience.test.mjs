// Never losing the thread: a reload or a dropped connection in the middle of a streamed reply ends
// with exactly the reply (nothing lost, nothing twice); open side conversations are found again after
// a reload; two tabs on one room show the same thing; after a server restart the sessions show
// disconnected and sending resumes them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { live, send, sessionStatus, shots, startSession, texts, tid, useConsole } from '../support/console.mjs';

const h = useConsole();
const view = tid('session-view');
const chunks = (n) => Array.from({ length: n }, (_, i) => `chunk ${i + 1}`).join(' ');
const agentTexts = async (page, within) => (await texts(page, 'message', within)).map((t) => t.replace(/^Agent/, ''));

test('a reload in the middle of a streamed reply: nothing lost, nothing twice', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'reload' });
  await startSession(page, 's1');
  await send(page, '/slow 25\n/chunks 80');
  await page.waitForSelector(`${view} ${tid('message')}:has-text("chunk 10 ")`);
  await page.reload();
  await live(page);
  // The room and session come back from the fragment, the token from sessionStorage.
  await page.waitForSelector(`${view}[data-session="s1"]`);
  const done = `${view} ${tid('message')}[data-done="true"]`;
  await page.waitForSelector(done);
  assert.deepEqual(await agentTexts(page), [chunks(80)]);
  assert.equal((await texts(page, 'user-message')).length, 1);
  page.assertClean();
});

test('a dropped connection in the middle of a streamed reply: it resumes from the last seq', { timeout: 30_000 }, async () => {
  const context = await h.browser.newContext({ viewport: { width: 1400, height: 900 } });
  h.contexts.push(context);
  // Every room socket goes through this route: the test can cut it, the page then reconnects.
  const sockets = [];
  await context.routeWebSocket(/\/v1\/rooms\/[^/]+\/ws/, (ws) => {
    sockets.push({ url: ws.url(), ws });
    ws.connectToServer();
  });
  const page = await h.open({ room: 'drop', context });
  await startSession(page, 's1');
  const roomSockets = () => sockets.filter((s) => s.url.includes('/rooms/drop/'));
  assert.equal(roomSockets().length, 1);
  // Record the connection indicator's states.
  await page.evaluate(() => {
    window.states = [];
    const el = document.querySelector('[data-testid="connection-status"]');
    new MutationObserver(() => window.states.push(el.dataset.state)).observe(el, { attributes: true });
  });
  await send(page, '/slow 25\n/chunks 80');
  await page.waitForSelector(`${view} ${tid('message')}:has-text("chunk 10 ")`);
  await roomSockets()[0].ws.close({ code: 1011, reason: 'cut by the test' });
  await page.waitForFunction(() => window.states.includes('reconnecting'));
  await page.waitForFunction(() => window.states.at(-1) === 'live');
  const again = roomSockets()[1];
  assert.ok(again, 'no second connection');
  const after = Number(new URL(again.url).searchParams.get('after'));
  assert.ok(after > 0, `reconnected with ${again.url}`);
  await page.waitForSelector(`${view} ${tid('message')}[data-done="true"]`);
  assert.deepEqual(await agentTexts(page), [chunks(80)]);
  // The reconnect asked only for what came after what the page had.
  const log = (await h.rest.events('drop')).data;
  assert.ok(after < log.at(-1).seq);
  page.assertClean();
});

test('two tabs on one room show the same thing; an answer in one resolves it in both', { timeout: 30_000 }, async () => {
  const one = await h.open({ room: 'tabs' });
  await startSession(one, 's1');
  const two = await h.open({ room: 'tabs', session: 's1' });
  await send(one, 'hello from tab one\n/run make all');
  const pending = `${view} ${tid('interaction')}[data-state="pending"]`;
  await one.waitForSelector(pending);
  await two.waitForSelector(pending);
  await two.click(`${pending} ${tid('decision-accept')}`);
  for (const p of [one, two]) {
    await p.waitForSelector(`${view} ${tid('message')}[data-done="true"]`);
    await sessionStatus(p, 's1', 'ready');
  }
  const seen = async (p) => p.$eval(`${view} ${tid('transcript')}`, (e) => e.innerText);
  assert.equal(await seen(one), await seen(two));
  assert.match(await seen(one), /You said: hello from tab one/);
  one.assertClean();
  two.assertClean();
});

test('open side conversations are found again after a reload', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'sides' });
  await startSession(page, 's1');
  await page.waitForSelector(`${tid('open-side')}:not([disabled])`);
  await page.click(tid('open-side'));
  const side = tid('side-panel');
  await page.waitForSelector(side);
  await send(page, 'side question', { within: side });
  await page.waitForSelector(`${side} ${tid('message')}[data-done="true"]`);
  const before = await page.$eval(`${side} ${tid('transcript')}`, (e) => e.innerText);
  await page.reload();
  await live(page);
  await page.waitForSelector(`${side} ${tid('message')}[data-done="true"]`);
  assert.equal(await page.$eval(`${side} ${tid('transcript')}`, (e) => e.innerText), before);
  assert.deepEqual(await agentTexts(page, side), ['You said: side question']);
  // Also when only the session is in the address (a link): its open side is found over REST.
  const fresh = await h.open({ room: 'sides', session: 's1' });
  await fresh.waitForSelector(`${side} ${tid('message')}[data-done="true"]`);
  assert.deepEqual(await agentTexts(fresh, side), ['You said: side question']);
  page.assertClean();
  fresh.assertClean();
});

test('a server restart: the sessions show disconnected, sending resumes them', { timeout: 45_000 }, async () => {
  const page = await h.open({ room: 'restart' });
  await startSession(page, 's1');
  await send(page, 'before the restart');
  await page.waitForSelector(`${view} ${tid('message')}[data-done="true"]`);
  await sessionStatus(page, 's1', 'ready');
  const res = await h.server.restart();
  assert.ok(res.code === 0 || res.signal === 'SIGTERM', JSON.stringify(res));
  await sessionStatus(page, 's1', 'disconnected');
  await live(page);
  assert.match(await page.textContent(view), /The server (restarted|shut down)/);
  await shots(page, '11-after-restart');
  await send(page, 'after the restart');
  await page.waitForSelector(`${view} ${tid('message')}[data-done="true"] >> nth=1`);
  await sessionStatus(page, 's1', 'ready');
  assert.deepEqual(await agentTexts(page), ['You said: before the restart', 'You said: after the restart']);
  assert.equal((await h.rest.call('GET', '/v1/rooms/restart/sessions/s1', undefined, 200)).json.live, true);
  // While the server was away the page may have logged failed connections; nothing else.
  page.assertClean([/WebSocket connection to .* failed/, /Failed to load resource/]);
});
