// 4. Application-level ping/pong from the browser.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { api } from '../support/api.mjs';
import { useHarness } from '../support/browser.mjs';

const h = useHarness();

test('{"type":"ping"} from the browser is answered by {"type":"pong"}, one per ping', { timeout: 30_000 }, async () => {
  const room = 'web-ping';
  const page = await h.openPage(room, { after: 0 });
  await page.waitForFunction(() => window.conns.c1.open && window.framesOf('c1').length >= 1);
  assert.equal(await page.evaluate(() => window.framesOf('c1')[0].type), 'hello');

  await page.evaluate(() => window.send('c1', { type: 'ping' }));
  await page.waitForFunction(() => window.framesOf('c1').some((f) => f.type === 'pong'));

  await page.evaluate(() => {
    for (let i = 0; i < 3; i++) window.send('c1', { type: 'ping' });
  });
  await page.waitForFunction(() => window.framesOf('c1').filter((f) => f.type === 'pong').length >= 4);

  // Pings interleaved with a live turn: the event stream stays intact and the socket stays open.
  const rest = api(h.server.baseUrl, h.server.token);
  await rest.createSession(room, 's1');
  const { turnId } = await rest.startTurn(room, 's1', '/slow 10\n/chunks 20');
  await page.evaluate(() => window.send('c1', { type: 'ping' }));
  await page.waitForFunction(
    (tid) => window.eventsOf('c1').some((e) => e.type === 'turn.completed' && e.payload.turnId === tid),
    turnId,
  );
  await page.waitForFunction(() => window.framesOf('c1').filter((f) => f.type === 'pong').length >= 5);

  const frames = await page.evaluate(() => window.framesOf('c1'));
  const pongs = frames.filter((f) => f.type === 'pong');
  assert.equal(pongs.length, 5, 'exactly one pong per ping');
  const events = frames.filter((f) => f.type === 'event').map((f) => f.event);
  assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1));
  assert.deepEqual(events, (await rest.events(room)).data);
  const conn = await page.evaluate(() => ({ open: window.conns.c1.open, closed: window.conns.c1.closed }));
  assert.deepEqual(conn, { open: true, closed: false });
});
