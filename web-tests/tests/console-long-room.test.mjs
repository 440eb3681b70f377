// A room far longer than a screen, and past its retention: the console opens it live from its
// head, draws the session from its present and its latest turns (not the room's whole log), reads
// earlier turns as the transcript is scrolled to its top — none twice, the text on screen kept in
// place — down to what the server still keeps, and says where the kept history starts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tid, useConsole } from '../support/console.mjs';

// 60 scripted turns (about seven events each) past a retention of 300 events.
const h = useConsole({ serverOptions: { extraArgs: ['--retention-events', '300'] } });
const TURNS = 60;

/** Runs `TURNS` turns in session `s` of room `room` over REST, each to its end. */
async function history(room, s) {
  await h.rest.createSession(room, s);
  for (let i = 0; i < TURNS; i++) {
    await h.rest.startTurn(room, s, `question ${i}`);
    const { json } = await h.rest.call('GET', `/v1/rooms/${room}/sessions/${s}?wait=idle&timeoutSecs=10`, undefined, 200);
    assert.equal(json.status, 'ready');
  }
}

/** The turns the transcript shows, oldest first, by their text. */
const shown = (page) => page.$$eval(`${tid('session-view')} ${tid('user-message')}`, (els) => els.map((e) => e.querySelector('.md')?.textContent?.trim() ?? ''));

test('a long room opens at its latest turns; scrolling up reads what is kept, once', { timeout: 90_000 }, async () => {
  await history('long', 's');
  // Every address the console asks, HTTP and WebSocket.
  const requests = [];
  const ctx = await h.browser.newContext({ viewport: { width: 1400, height: 900 } });
  h.contexts.push(ctx);
  ctx.on('request', (r) => requests.push(r.url()));
  ctx.on('page', (p) => p.on('websocket', (ws) => requests.push(ws.url())));
  const page = await h.open({ room: 'long', session: 's', context: ctx });
  const last = `${tid('session-view')} ${tid('user-message')}:has-text("question ${TURNS - 1}")`;
  await page.waitForSelector(last);
  // Only the latest turns: the first of the room's turns is neither drawn nor read.
  const first = await shown(page);
  assert.ok(first.length >= 4 && first.length < 20, `latest turns only: ${JSON.stringify(first)}`);
  assert.equal(first.at(-1), `question ${TURNS - 1}`);
  await page.waitForSelector(tid('older-turns'));

  // Scrolled to the top, again and again: earlier turns come above, each once, in order.
  for (let i = 0; i < 10 && (await page.$(tid('older-turns'))); i++) {
    const before = await shown(page);
    await page.$eval(tid('transcript'), (el) => el.scrollTo(0, 0));
    // The turn at the top when the earlier ones were asked for stays where it is on screen.
    const anchor = page.locator(`${tid('session-view')} ${tid('user-message')}:has-text("${before[0]}")`).first();
    const top = await anchor.boundingBox();
    await page.waitForFunction(
      ([sel, n]) => document.querySelectorAll(sel).length > n || !document.querySelector('[data-testid="older-turns"]'),
      [`${tid('session-view')} ${tid('user-message')}`, before.length],
    );
    const after = await shown(page);
    assert.deepEqual(after.slice(after.length - before.length), before, 'older turns go above, the rest unchanged');
    if (after.length > before.length) {
      const moved = await anchor.boundingBox();
      assert.ok(Math.abs(moved.y - top.y) < 40, `the turn on screen stayed in place: ${top.y} -> ${moved.y}`);
    }
  }
  const all = await shown(page);
  assert.equal(new Set(all).size, all.length, `no turn twice: ${JSON.stringify(all)}`);
  const numbers = all.map((t) => Number(t.replace('question ', '')));
  assert.deepEqual(numbers, numbers.slice().sort((a, b) => a - b), 'in order');
  assert.equal(numbers.at(-1), TURNS - 1);
  assert.ok(numbers[0] > 0, 'the first turns are pruned');
  // What the server keeps is all shown, and it says the rest is gone.
  await page.waitForSelector(tid('start-pruned'));
  const kept = (await h.rest.call('GET', '/v1/rooms/long/sessions/s/events?before=100000&limit=1000', undefined, 200)).json;
  const keptTurns = kept.data.filter((e) => e.type === 'turn.started').length;
  assert.equal(all.length, keptTurns, 'every kept turn is shown');
  // The room's log was never replayed from its start: no stream or page asked for after=0.
  assert.ok(!requests.some((u) => /[?&]after=0\b/.test(u)), requests.join('\n'));

  // A live turn after all that comes once, at the end.
  await h.rest.startTurn('long', 's', 'one more');
  await page.waitForSelector(`${tid('session-view')} ${tid('user-message')}:has-text("one more")`);
  const end = await shown(page);
  assert.equal(end.filter((t) => t === 'one more').length, 1);
  assert.equal(end.at(-1), 'one more');
  page.assertClean();
});
