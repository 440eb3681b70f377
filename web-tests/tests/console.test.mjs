// The built-in console (GET /, server/src/console.html) in a real browser: opened from the URL the
// server prints with a generated token, it drops the token from the address bar, then starts a session,
// sends a turn and streams the reply, answers an approval, and survives a reload.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { api } from '../support/api.mjs';
import { launchBrowser } from '../support/browser.mjs';
import { startServer } from '../support/server.mjs';

let server;
let browser;
before(async () => {
  // No --token-file: the server generates a token and prints it in the console URL's fragment.
  server = await startServer({ tokenFile: false });
  browser = await launchBrowser().catch(async (e) => {
    await server.stop();
    throw e;
  });
});
after(async () => {
  await browser?.close().catch(() => {});
  const res = await server?.stop();
  if (res) assert.ok(res.code === 0 || res.signal === 'SIGTERM', `server stopped uncleanly: ${JSON.stringify(res)}`);
});

test('console: token from the printed URL, session, streamed turn, approval, reload', { timeout: 30_000 }, async () => {
  const origin = `http://${server.addr}`;
  assert.match(server.consoleUrl, /^http:\/\/127\.0\.0\.1:\d+\/#token=[0-9a-f]{64}$/, server.stdout());
  const token = server.token;
  assert.ok(server.stdout().includes(`#token=${token}`));

  const context = await browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e}`));
  page.on('console', (m) => {
    // CSP violations and script errors are reported as console errors.
    if (m.type() === 'error' && !/favicon/.test(m.location()?.url ?? '')) problems.push(`console: ${m.text()}`);
  });

  const res = await page.goto(server.consoleUrl);
  assert.equal(res.status(), 200);
  const csp = res.headers()['content-security-policy'];
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /connect-src 'self'/);

  // The token is gone from the address bar (and so from history), kept in sessionStorage only.
  await page.waitForFunction(() => !location.hash.includes('token'));
  const href = await page.evaluate(() => location.href);
  assert.ok(!href.includes(token), `token still in location.href: ${href}`);
  assert.equal(href, `${origin}/`);
  assert.equal(await page.evaluate(() => sessionStorage.getItem('ensemble.token')), token);
  assert.ok(!(await page.evaluate(() => document.documentElement.outerHTML)).includes(token));

  // REST with the token works: the rooms list loaded.
  await page.waitForFunction(() => document.getElementById('status').textContent === 'connected');

  const room = 'console-room';
  await page.fill('#room-input', room);
  await page.click('#open-room');
  await page.waitForFunction(() => document.getElementById('ws-state').textContent === 'live');
  assert.equal(await page.evaluate(() => location.hash), `#room=${room}`);

  await page.fill('#new-session-id', 's1');
  await page.click('#start-session');
  await page.waitForSelector('#sessions button[data-session="s1"]');
  await page.waitForSelector('#session-view:not(.hidden)');

  // Record every state of the agent's message while it streams.
  await page.evaluate(() => {
    window.seen = [];
    const box = document.getElementById('transcripts');
    new MutationObserver(() => {
      const m = box.querySelector('.entry.agent');
      if (m && m.textContent !== window.seen.at(-1)) window.seen.push(m.textContent);
    }).observe(box, { childList: true, subtree: true, characterData: true });
  });
  const words = 'hello from the browser console, one word at a time';
  await page.fill('#turn-input', words);
  await page.click('#send-turn');
  const expected = `You said: ${words}`;
  await page.waitForFunction(
    (t) => [...document.querySelectorAll('.entry.agent')].some((n) => n.textContent === t),
    expected,
  );
  const user = await page.evaluate(() => [...document.querySelectorAll('.entry.user')].map((n) => n.textContent));
  assert.deepEqual(user, [words]);
  const seen = await page.evaluate(() => window.seen);
  assert.equal(seen.at(-1), expected);
  assert.ok(seen.length >= 3, `the reply did not stream (states seen: ${JSON.stringify(seen)})`);
  for (const s of seen) assert.ok(expected.startsWith(s), `${JSON.stringify(s)} is not a prefix of the reply`);
  assert.equal(await page.inputValue('#turn-input'), '');

  // The same turn, as the server recorded it.
  const rest = api(server.baseUrl, token);
  const { data: sessions } = await rest.sessions(room);
  assert.deepEqual(sessions.map((s) => s.sessionId), ['s1']);
  const log = await rest.events(room);
  assert.ok(log.data.some((e) => e.type === 'message.completed' && e.payload.text === expected));

  // An approval, answered in the UI.
  await page.waitForFunction(() => document.getElementById('session-status').textContent === 'ready');
  await page.fill('#turn-input', '/run echo approved-in-console');
  await page.click('#send-turn');
  await page.click('#interactions button[data-decision="accept"]');
  await page.waitForFunction(() =>
    [...document.querySelectorAll('.entry.note')].some((n) => n.textContent.startsWith('■ call completed')),
  );
  await page.waitForFunction(() => document.querySelectorAll('#interactions .interaction').length === 0);
  assert.deepEqual((await rest.interactions(room, 's1')).data, []);
  const resolved = (await rest.events(room)).data.filter((e) => e.type === 'interaction.resolved');
  assert.deepEqual(resolved.map((e) => [e.payload.decision, e.payload.resolvedBy]), [['accept', 'client']]);

  // A reload keeps working (token from sessionStorage, room from the fragment) and replays the room.
  await page.reload();
  await page.waitForFunction(() => document.getElementById('ws-state').textContent === 'live');
  await page.waitForFunction(
    (t) => [...document.querySelectorAll('.entry.agent')].some((n) => n.textContent === t),
    expected,
  );
  assert.ok(!(await page.evaluate(() => location.href)).includes(token));
  assert.deepEqual(problems, []);
  await context.close();
});
