// 1. The browser gets `hello`, then a whole scripted turn started over REST, gap-free and in order.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { api, assertConsecutive } from '../support/api.mjs';
import { useHarness } from '../support/browser.mjs';

const h = useHarness();

test('browser receives hello, then a full scripted turn in order with gap-free seq', { timeout: 30_000 }, async () => {
  const room = 'web-turn';
  const rest = api(h.server.baseUrl, h.server.token);
  const page = await h.openPage(room, { after: 0 });

  // hello first, on an empty room.
  await page.waitForFunction(() => window.frames.length >= 1 && window.conns.c1.open);
  const isArray = await page.evaluate(() => Array.isArray(window.frames));
  assert.ok(isArray, 'window.frames should be the probe array');
  // The token travelled as the `ensemble.bearer.…` subprotocol; the server chose `ensemble.v1`, so the
  // token is not echoed back in the handshake.
  assert.equal(await page.evaluate(() => window.conns.c1.ws.protocol), 'ensemble.v1');
  const hello = await page.evaluate(() => window.frames[0].frame);
  assert.equal(hello.type, 'hello');
  assert.equal(hello.roomId, room);
  assert.equal(hello.headSeq, 0);
  assert.deepEqual(hello.sessions, []);

  await rest.createSession(room, 's1');
  const words = 'the quick brown fox jumps over the lazy dog';
  const { turnId } = await rest.startTurn(room, 's1', words);
  assert.equal(typeof turnId, 'string');

  await page.waitForFunction(
    (tid) => window.eventsOf('c1').some((e) => e.type === 'turn.completed' && e.payload.turnId === tid),
    turnId,
  );
  const frames = await page.evaluate(() => window.framesOf('c1'));
  assert.equal(frames[0].type, 'hello');
  assert.ok(frames.slice(1).every((f) => f.type === 'event'), `unexpected frame types: ${frames.map((f) => f.type)}`);
  const events = frames.slice(1).map((f) => f.event);
  assertConsecutive(events, 1);
  assert.ok(events.every((e) => e.roomId === room && e.sessionId === 's1'));

  const types = events.map((e) => e.type);
  const idx = (t) => types.indexOf(t);
  assert.equal(types[0], 'session.started', `types: ${types}`);
  assert.equal(events[0].payload.session.sessionId, 's1');
  const iStarted = idx('turn.started');
  const iCompletedMsg = idx('message.completed');
  const iTurnDone = idx('turn.completed');
  assert.ok(iStarted > 0, `turn.started missing: ${types}`);
  assert.equal(events[iStarted].payload.turnId, turnId);
  assert.equal(events[iStarted].payload.origin, 'user');
  assert.equal(iTurnDone, types.length - 1, `turn.completed should be the last event: ${types}`);
  assert.ok(iStarted < iCompletedMsg && iCompletedMsg < iTurnDone, `order: ${types}`);

  // Right after turn.started, the session (started without a title) is named by the turn's words.
  assert.equal(types[iStarted + 1], 'session.updated', `order: ${types}`);
  assert.equal(events[iStarted + 1].payload.reason, 'titled');
  // Then, until message.completed: only the deltas, at least one per word.
  const deltas = events.slice(iStarted + 2, iCompletedMsg);
  assert.ok(deltas.length >= words.split(' ').length, `too few deltas: ${deltas.length}`);
  assert.ok(deltas.every((e) => e.type === 'message.delta'), `non-delta inside the stream: ${types}`);
  // Everything belonging to the turn carries its turnId.
  for (const e of events.slice(iStarted)) assert.equal(e.turnId, turnId, `${e.seq} ${e.type} lacks turnId`);

  const completed = events[iCompletedMsg].payload;
  assert.ok(deltas.every((e) => e.payload.itemId === completed.itemId), 'deltas belong to the completed item');
  assert.equal(deltas.map((e) => e.payload.text).join(''), completed.text, 'concatenated deltas = completed text');
  assert.equal(completed.text, `You said: ${words}`);

  // The browser saw exactly the durable log.
  const log = await rest.events(room);
  assert.equal(log.headSeq, events.length);
  assert.deepEqual(events, log.data);
  assert.deepEqual(await page.evaluate(() => window.errors), []);
  assert.deepEqual(page.consoleErrors, []);
});
