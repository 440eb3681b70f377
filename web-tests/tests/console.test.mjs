// The console's rooms and sessions: opened from the URL the server prints (generated token, gone from
// the address bar afterwards), the strict CSP, the room list with live counts, the "new session" form
// (providers, unavailable ones disabled with the reason; cwd, model, approval policy), status badges,
// resume, release and close.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { live, sessionStatus, shots, startSession, send, tid, useConsole } from '../support/console.mjs';

// No --token-file: the server generates a token and prints it in the console URL's fragment. codex is
// pointed at a binary that does not exist, so the form has a provider that is unavailable.
const h = useConsole({ serverOptions: { tokenFile: false, extraArgs: ['--codex-bin', '/nonexistent/codex'] } });

test('opened from the printed URL: CSP, the token only in sessionStorage, an empty console', { timeout: 30_000 }, async () => {
  const { server } = h;
  assert.match(server.consoleUrl, /^http:\/\/127\.0\.0\.1:\d+\/#token=[0-9a-f]{64}$/, server.stdout());
  const context = await h.browser.newContext({ viewport: { width: 1400, height: 900 } });
  h.contexts.push(context);
  const page = await context.newPage();
  const { watchProblems } = await import('../support/console.mjs');
  watchProblems(page);
  const res = await page.goto(server.consoleUrl);
  assert.equal(res.status(), 200);
  const csp = res.headers()['content-security-policy'];
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.match(csp, /style-src 'self'(;|$)/);
  assert.match(csp, /connect-src 'self'/);
  // Every asset comes from the server itself (no CDN, no web fonts).
  const requested = [];
  page.on('request', (r) => requested.push(r.url()));
  await page.reload();
  await page.waitForSelector(tid('room-list'));
  for (const url of requested) assert.ok(url.startsWith(`${server.baseUrl}/`), `fetched from elsewhere: ${url}`);
  assert.ok(requested.some((u) => u.endsWith('/?asset=app.js')) && requested.some((u) => u.endsWith('/?asset=app.css')));

  // The token is gone from the address bar (and so from history), kept in sessionStorage only.
  const href = await page.evaluate(() => location.href);
  assert.ok(!href.includes(server.token), `token still in location.href: ${href}`);
  assert.equal(await page.evaluate(() => sessionStorage.getItem('ensemble.token')), server.token);
  assert.ok(!(await page.content()).includes(server.token));
  await page.waitForSelector(`${tid('room-list')} >> text=No rooms yet.`);
  await shots(page, '01-empty');

  // Without a token the console says how to get one, and asks the API nothing.
  const bare = await context.newPage();
  watchProblems(bare);
  await bare.goto(`${server.baseUrl}/`);
  await bare.waitForSelector('input[aria-label="Bearer token"]');
  await bare.fill('input[aria-label="Bearer token"]', server.token);
  await bare.click('text=Use token');
  await bare.waitForSelector(`${tid('room-list')} >> text=No rooms yet.`);
  page.assertClean();
  bare.assertClean();
});

test('rooms with live counts, the new-session form, badges, resume, release and close', { timeout: 60_000 }, async () => {
  const { rest, server } = h;
  // A room that exists before the page opens, and one the page opens itself.
  await rest.createSession('other', 'o1');
  const page = await h.open();
  await page.waitForSelector(tid('room-item', '[data-room="other"][data-count="1"]'));
  // The count follows the room's stream: no refresh.
  await rest.createSession('other', 'o2');
  await page.waitForSelector(tid('room-item', '[data-room="other"][data-count="2"]'));
  // Working and waiting sessions show on the room too.
  await rest.startTurn('other', 'o1', '/run make');
  await page.waitForSelector(`${tid('room-item', '[data-room="other"]')} .badge.waiting`);

  await page.fill(tid('room-input'), 'work');
  await page.click(tid('open-room'));
  await live(page);
  assert.match(await page.evaluate(() => location.hash), /room=work/);

  // The form: providers from /v1/providers, codex disabled with its reason.
  await page.waitForSelector(tid('new-session-form'));
  const options = await page.$$eval(`${tid('provider-select')} option`, (os) => os.map((o) => ({ value: o.value, disabled: o.disabled, text: o.textContent })));
  const codex = options.find((o) => o.value === 'codex');
  assert.ok(codex?.disabled, JSON.stringify(options));
  assert.match(codex.text, /unavailable: .+/);
  assert.deepEqual(options.find((o) => o.value === 'scripted')?.disabled, false);
  assert.equal(await page.inputValue(tid('provider-select')), 'scripted');
  assert.match(await page.textContent(tid('unavailable-providers')), /codex|Codex/);
  await shots(page, '02-new-session');

  mkdirSync(join(server.workspace, 'proj'), { recursive: true });
  await startSession(page, 's1', {
    'title-input': 'Fix the tests',
    'cwd-input': join(server.workspace, 'proj'),
    'model-input': 'scripted-large',
    'approval-select': 'untrusted',
  });
  const made = (await rest.call('GET', '/v1/rooms/work/sessions/s1', undefined, 200)).json;
  assert.equal(made.provider, 'scripted');
  assert.equal(made.title, 'Fix the tests');
  assert.equal(made.cwd, join(server.workspace, 'proj'));
  assert.equal(made.settings.model, 'scripted-large');
  assert.equal(made.settings.approvalPolicy, 'untrusted');
  const item = tid('session-item', '[data-session="s1"]');
  assert.match(await page.textContent(item), /Fix the tests/);
  assert.match(await page.textContent(item), /scripted/);
  await sessionStatus(page, 's1', 'ready');
  await page.waitForSelector(tid('room-item', '[data-room="work"][data-count="1"]'));

  // A bad cwd is refused with the server's reason, and nothing is started.
  await page.click(tid('new-session'));
  await page.fill(tid('session-id-input'), 'bad');
  await page.fill(tid('cwd-input'), '/etc');
  await page.click(tid('start-session'));
  await page.waitForSelector(`${tid('app-message')} >> text=/cwd_outside_workspace|invalid_cwd/`);
  assert.equal((await rest.call('GET', '/v1/rooms/work/sessions/bad')).status, 404);
  await page.click(`${tid('new-session-form')} >> text=Cancel`);

  // Badges: working while a turn streams, waiting for you on an approval, ready after.
  await send(page, '/slow 40\n/chunks 30');
  await sessionStatus(page, 's1', 'working');
  assert.equal(await page.textContent(`${tid('session-view')} ${tid('status-badge')}`), 'working');
  await sessionStatus(page, 's1', 'ready');
  await send(page, '/run ls');
  await sessionStatus(page, 's1', 'waiting');
  assert.equal(await page.textContent(`${item} ${tid('status-badge')}`), 'waiting for you');
  await shots(page, '03-waiting');
  await page.click(tid('decision-decline'));
  await sessionStatus(page, 's1', 'ready');

  // Release: the process stops, the session is disconnected and resumable; Resume brings it back.
  await page.click(tid('release'));
  await sessionStatus(page, 's1', 'disconnected');
  await page.click(tid('resume'));
  await sessionStatus(page, 's1', 'ready');
  assert.equal((await rest.call('GET', '/v1/rooms/work/sessions/s1', undefined, 200)).json.live, true);

  // Disconnected by another client: the badge follows the stream.
  await rest.call('POST', '/v1/rooms/work/sessions/s1/disconnect', undefined, 204);
  await sessionStatus(page, 's1', 'disconnected');
  await shots(page, '04-disconnected');
  await page.click(tid('resume'));
  await sessionStatus(page, 's1', 'ready');

  // Close asks first, then the session moves to the closed list.
  await page.click(tid('close-session'));
  await page.click(tid('confirm-close'));
  await sessionStatus(page, 's1', 'completed');
  await page.waitForSelector(`${tid('session-view')} ${tid('session-closed')}:text-is("This session is closed by admin.")`);
  assert.equal((await rest.call('GET', '/v1/rooms/work/sessions/s1', undefined, 200)).json.status, 'completed');
  page.assertClean([/the server responded with a status of 400/]);
});
