// 3. An approval flow seen from the page: interaction.requested -> (REST answer) -> resolved -> call -> turn done.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { api, assertConsecutive } from '../support/api.mjs';
import { useHarness } from '../support/browser.mjs';

const h = useHarness();

test('approval requested, answered over REST, resolved and run, as seen by the browser', { timeout: 30_000 }, async () => {
  const room = 'web-approval';
  const rest = api(h.server.baseUrl, h.server.token);
  await rest.createSession(room, 's1');
  // Join late (live only, no ?after): the page must still see the whole turn.
  const page = await h.openPage(room);
  await page.evaluate(() => window.connect('live', null));
  await page.waitForFunction(() => window.framesOf('live').length >= 1);
  const hello = await page.evaluate(() => window.framesOf('live')[0]);
  assert.equal(hello.type, 'hello');
  assert.ok(hello.headSeq >= 1);
  assert.deepEqual(hello.sessions.map((s) => s.sessionId), ['s1']);

  const command = 'echo hello-from-browser-test';
  const { turnId } = await rest.startTurn(room, 's1', `/run ${command}`);

  const handle = await page.waitForFunction(() =>
    window.eventsOf('live').find((e) => e.type === 'interaction.requested'),
  );
  const requested = await handle.jsonValue();
  assert.equal(requested.turnId, turnId);
  assert.equal(requested.payload.kind, 'commandApproval');
  assert.equal(requested.payload.command, command);
  assert.ok(requested.payload.options.includes('accept'));
  const { requestId } = requested.payload;

  // Nothing runs until it is answered.
  const pending = await rest.interactions(room, 's1');
  assert.deepEqual(pending.data.map((i) => i.requestId), [requestId]);
  const soFar = await page.evaluate(() => window.eventsOf('live').map((e) => e.type));
  assert.ok(!soFar.includes("call.started") && !soFar.includes("turn.completed"), `ran unapproved: ${soFar}`);

  await rest.answer(room, 's1', requestId, { decision: 'accept' });

  await page.waitForFunction(
    (tid) => window.eventsOf('live').some((e) => e.type === 'turn.completed' && e.payload.turnId === tid),
    turnId,
  );
  const events = await page.evaluate(() => window.eventsOf('live'));
  assertConsecutive(events, hello.headSeq + 1);
  const types = events.map((e) => e.type);
  const at = (t) => types.indexOf(t);
  const iReq = at('interaction.requested');
  const iRes = at('interaction.resolved');
  const iCallStart = at('call.started');
  const iCallDone = at('call.completed');
  const iTurnDone = at('turn.completed');
  assert.ok(at('turn.started') < iReq, `order: ${types}`);
  assert.ok(iReq < iRes && iRes < iCallStart && iCallStart < iCallDone && iCallDone < iTurnDone, `order: ${types}`);
  assert.equal(iTurnDone, types.length - 1);

  assert.deepEqual(
    { requestId: events[iRes].payload.requestId, decision: events[iRes].payload.decision, resolvedBy: events[iRes].payload.resolvedBy },
    { requestId, decision: 'accept', resolvedBy: 'client' },
  );
  const callId = events[iCallStart].payload.callId;
  assert.equal(events[iCallDone].payload.callId, callId);
  if (requested.payload.callId !== undefined) assert.equal(requested.payload.callId, callId);
  assert.equal(events[iCallDone].payload.status, 'completed');

  // Answered exactly once.
  assert.deepEqual((await rest.interactions(room, 's1')).data, []);
  const again = await rest.call('POST', `/v1/rooms/${room}/sessions/s1/interactions/${requestId}`, { decision: 'accept' });
  assert.equal(again.status, 409);
  assert.equal(again.json.error.code, 'interaction_resolved');

  const log = await rest.events(room, hello.headSeq, 1000);
  assert.deepEqual(events, log.data);
});

test('userInput question answered over REST: the page sees the answer echoed back', { timeout: 30_000 }, async () => {
  const room = 'web-ask';
  const rest = api(h.server.baseUrl, h.server.token);
  const page = await h.openPage(room, { after: 0 });
  await page.waitForFunction(() => window.conns.c1.open && window.framesOf('c1').length >= 1);
  await rest.createSession(room, 's1');
  const { turnId } = await rest.startTurn(room, 's1', '/ask Which colour?');

  const requested = await (
    await page.waitForFunction(() => window.eventsOf('c1').find((e) => e.type === 'interaction.requested'))
  ).jsonValue();
  assert.equal(requested.payload.kind, 'userInput');
  assert.equal(requested.payload.title, 'Which colour?');
  assert.ok(Array.isArray(requested.payload.questions) && requested.payload.questions.length === 1);
  const qid = requested.payload.questions[0].id;

  await rest.answer(room, 's1', requested.payload.requestId, { decision: 'accept', answers: { [qid]: 'teal' } });
  await page.waitForFunction(
    (tid) => window.eventsOf('c1').some((e) => e.type === 'turn.completed' && e.payload.turnId === tid),
    turnId,
  );
  const events = await page.evaluate(() => window.eventsOf('c1'));
  assertConsecutive(events, 1);
  const resolved = events.find((e) => e.type === 'interaction.resolved');
  assert.equal(resolved.payload.requestId, requested.payload.requestId);
  assert.equal(resolved.payload.decision, 'accept');
  assert.ok(resolved.seq > requested.seq);
  const msg = events.find((e) => e.type === 'message.completed' && e.seq > resolved.seq);
  assert.equal(msg.payload.text, 'You answered: teal');
  assert.deepEqual(events, (await rest.events(room)).data);
});
