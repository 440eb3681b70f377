// 2. Reconnect mid-stream with ?after=<last seq>: both connections together are exactly the REST log.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { api, assertConsecutive, waitFor } from '../support/api.mjs';
import { useHarness } from '../support/browser.mjs';

const h = useHarness();

test('reconnect with after=<last seq> mid-stream: union of both sockets == REST event log', { timeout: 30_000 }, async () => {
  const room = 'web-reconnect';
  const rest = api(h.server.baseUrl, h.server.token);
  const page = await h.openPage(room, { after: 0 });
  await page.waitForFunction(() => window.conns.c1.open && window.frames.length >= 1);

  await rest.createSession(room, 's1');
  const { turnId } = await rest.startTurn(room, 's1', '/slow 20\n/chunks 100');

  // Let some deltas arrive, then close the browser's socket while the turn still streams.
  await page.waitForFunction(() => window.eventsOf('c1').filter((e) => e.type === 'message.delta').length >= 10);
  // (The close code is not checked here: the server does not echo the Close frame, so Chromium
  // reports 1006; see close.test.mjs.)
  await page.evaluate(() => window.disconnect('c1'));
  const first = await page.evaluate(() => window.eventsOf('c1'));
  const lastSeq = await page.evaluate(() => window.lastSeq());
  assert.equal(lastSeq, first.at(-1).seq);
  assert.ok(!first.some((e) => e.type === 'turn.completed'), 'turn finished before the disconnect: test too slow');

  // Make sure events were published while no socket was open, so the reconnect needs a replay.
  await waitFor(async () => (await rest.events(room, lastSeq, 1)).headSeq >= lastSeq + 5, {
    what: 'events published while disconnected',
  });

  await page.evaluate(() => window.reconnect('c2'));
  const c2url = await page.evaluate(() => window.conns.c2.url);
  assert.ok(c2url.endsWith(`?after=${lastSeq}`), c2url);
  await page.waitForFunction(
    (tid) => window.eventsOf('c2').some((e) => e.type === 'turn.completed' && e.payload.turnId === tid),
    turnId,
    { timeout: 20_000 },
  );
  const c2frames = await page.evaluate(() => window.framesOf('c2'));
  assert.equal(c2frames[0].type, 'hello');
  assert.ok(c2frames[0].headSeq >= lastSeq + 5, `hello.headSeq ${c2frames[0].headSeq} should include the missed events`);
  const second = c2frames.filter((f) => f.type === 'event').map((f) => f.event);
  assert.equal(c2frames.length, second.length + 1, `unexpected frames: ${c2frames.map((f) => f.type)}`);
  assert.ok(!c2frames.some((f) => f.type === 'resync'));

  assertConsecutive(first, 1, '(first socket)');
  assertConsecutive(second, lastSeq + 1, '(second socket)');

  const union = [...first, ...second];
  const ids = new Set(union.map((e) => e.eventId));
  assert.equal(ids.size, union.length, 'duplicate eventIds across the two sockets');

  const log = await rest.events(room, 0, 1000);
  assert.equal(log.headSeq, union.length);
  assert.deepEqual(union, log.data, 'union of both sockets differs from GET /events');

  // The streamed text still adds up across the reconnect.
  const deltas = union.filter((e) => e.type === 'message.delta' && e.turnId === turnId);
  const done = union.filter((e) => e.type === 'message.completed' && e.turnId === turnId);
  assert.equal(done.length, 1);
  assert.ok(deltas.length >= 100, `expected >=100 deltas, got ${deltas.length}`);
  assert.equal(deltas.map((e) => e.payload.text).join(''), done[0].payload.text);
  assert.deepEqual(await page.evaluate(() => window.errors), []);
});
