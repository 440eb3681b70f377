// Acting from the console: the composer (Ctrl+Enter), steering a running turn, cancel; approvals and
// questions answered inline with every decision the kind allows; a side conversation beside its
// session; the goal panel (set, pause, resume, clear, status, continuation turns).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { send, sessionStatus, shots, startSession, texts, tid, useConsole } from '../support/console.mjs';

const h = useConsole();
const view = tid('session-view');

test('Ctrl+Enter sends, steer while a turn runs, cancel', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'compose' });
  await startSession(page, 's1');
  await page.focus(tid('composer'));
  await page.keyboard.type('sent with the keyboard');
  await page.keyboard.press('Control+Enter');
  await page.waitForSelector(`${view} ${tid('message')}[data-done="true"]:has-text("You said: sent with the keyboard")`);
  assert.equal(await page.inputValue(tid('composer')), '');
  await sessionStatus(page, 's1', 'ready');

  // A long turn: Send becomes Steer and Cancel.
  await send(page, '/slow 50\n/chunks 60');
  await page.waitForSelector(tid('steer'));
  assert.equal(await page.$(tid('send')), null);
  await page.fill(tid('composer'), 'and be quick');
  await page.keyboard.press('Control+Enter'); // Ctrl+Enter steers while a turn runs
  await page.waitForSelector(`${view} .steer:has-text("and be quick")`);
  await page.waitForSelector(`${view} ${tid('message')}[data-done="true"]:has-text("(steered: and be quick)")`);
  const steered = (await h.rest.events('compose')).data.filter((e) => e.type === 'turn.steered');
  assert.equal(steered.length, 1);
  assert.equal(steered[0].payload.input[0].text, 'and be quick');
  await sessionStatus(page, 's1', 'ready');

  // Cancel a turn that would never end.
  await send(page, '/hang');
  await sessionStatus(page, 's1', 'working');
  await page.click(tid('cancel'));
  await page.waitForSelector(`${view} ${tid('canceled')}`);
  await sessionStatus(page, 's1', 'ready');
  await page.waitForSelector(tid('send'));
  const log = (await h.rest.events('compose')).data;
  assert.equal(log.filter((e) => e.type === 'turn.canceled').length, 1);
  page.assertClean();
});

test('approvals with every decision, and a question answered inline', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'approve' });
  await startSession(page, 's1');
  const pending = `${view} ${tid('interaction')}[data-state="pending"]`;

  // Every decision the request allows is a button.
  await send(page, '/run echo one');
  await page.waitForSelector(pending);
  const [asked] = (await h.rest.interactions('approve', 's1')).data;
  const buttons = await page.$$eval(`${pending} [data-testid^="decision-"]`, (bs) => bs.map((b) => b.dataset.testid.slice('decision-'.length)));
  assert.deepEqual(buttons, asked.options);
  assert.deepEqual([...asked.options].sort(), ['accept', 'acceptForSession', 'cancel', 'decline']);
  await shots(page, '07-approval');
  await page.click(`${pending} ${tid('decision-decline')}`);
  await page.waitForSelector(`${view} ${tid('interaction')}[data-state="resolved"] >> text=declined by admin`);
  await sessionStatus(page, 's1', 'ready');
  assert.equal((await texts(page, 'call')).length, 0, 'a declined command ran');

  // Accept for the session: this command runs, and the next one is not asked about.
  await send(page, '/run echo two');
  await page.click(`${pending} ${tid('decision-acceptForSession')}`);
  await page.waitForSelector(`${view} ${tid('call')}[data-status="completed"]:has-text("echo two")`);
  await sessionStatus(page, 's1', 'ready');
  await send(page, '/run echo three');
  await page.waitForSelector(`${view} ${tid('call')}[data-status="completed"]:has-text("echo three")`);
  assert.equal(await page.$$eval(`${view} ${tid('interaction')}`, (els) => els.length), 2);
  await sessionStatus(page, 's1', 'ready');

  // Accept, and cancel (which ends the turn), in a second session.
  await startSession(page, 's2');
  await send(page, '/run echo four');
  await page.click(`${pending} ${tid('decision-accept')}`);
  await page.waitForSelector(`${view} ${tid('call')}[data-status="completed"]:has-text("echo four")`);
  await sessionStatus(page, 's2', 'ready');
  await send(page, '/run echo five');
  await page.click(`${pending} ${tid('decision-cancel')}`);
  await page.waitForSelector(`${view} ${tid('canceled')}`);
  await sessionStatus(page, 's2', 'ready');

  // A question: typed into its input, sent with Enter.
  await send(page, '/ask Which colour?');
  await page.waitForSelector(`${pending}[data-kind="userInput"]`);
  assert.match(await page.textContent(pending), /Which colour\?/);
  await page.fill(`${pending} ${tid('answer-input')}`, 'teal');
  await shots(page, '08-question');
  await page.press(`${pending} ${tid('answer-input')}`, 'Enter');
  await page.waitForSelector(`${view} ${tid('message')}[data-done="true"]:has-text("You answered: teal")`);
  const resolved = (await h.rest.events('approve')).data.filter((e) => e.type === 'interaction.resolved').map((e) => e.payload.decision);
  assert.deepEqual(resolved, ['decline', 'acceptForSession', 'accept', 'cancel', 'accept']);
  page.assertClean();
});

test('a side conversation beside its session', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'side' });
  await startSession(page, 's1');
  await send(page, 'remember the main line');
  await sessionStatus(page, 's1', 'ready');
  await page.waitForSelector(`${tid('open-side')}:not([disabled])`);
  await page.click(tid('open-side'));
  const side = tid('side-panel');
  await page.waitForSelector(side);
  const sideId = await page.getAttribute(side, 'data-session');
  // Beside the session at 1400 px: right of its transcript, both on screen.
  const [main, panel] = [await page.$eval(tid('transcript'), (e) => e.getBoundingClientRect().toJSON()), await page.$eval(side, (e) => e.getBoundingClientRect().toJSON())];
  assert.ok(panel.left >= main.right && panel.right <= 1400, JSON.stringify({ main, panel }));
  assert.ok(sideId);
  await send(page, 'a quick question on the side', { within: side });
  await page.waitForSelector(`${side} ${tid('message')}[data-done="true"]:has-text("You said: a quick question on the side")`);
  // The side's turn is not in the session's transcript, nor in the room log.
  assert.deepEqual((await texts(page, 'message')).map((t) => t.replace(/^Agent/, '')), ['You said: remember the main line']);
  assert.ok(!(await h.rest.events('side')).data.some((e) => e.sessionId === sideId));
  await shots(page, '09-side');
  // Ending it: the panel goes, the session stays.
  await page.click(tid('close-side'));
  await page.waitForSelector(side, { state: 'detached' });
  assert.deepEqual((await h.rest.call('GET', '/v1/rooms/side/sessions/s1/sides', undefined, 200)).json.data, []);
  await sessionStatus(page, 's1', 'ready');
  assert.equal(await page.$(tid('side-item')), null);
  page.assertClean();
});

test('the goal panel: set, pause, resume, clear, and the turns that pursued it', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'goal' });
  await startSession(page, 's1');
  const panel = tid('goal-panel');
  const status = (s) => page.waitForSelector(`${panel} ${tid('goal-status')}[data-status="${s}"]`);
  await status('none');
  // `idle`: the scripted agent keeps the goal active without continuation turns.
  await page.fill(tid('goal-objective'), 'keep the build green idle');
  await page.click(tid('goal-set'));
  await status('active');
  assert.equal(await page.textContent(`${panel} .goal-objective-text`), 'keep the build green idle');
  await page.click(tid('goal-pause'));
  await status('paused');
  assert.equal((await h.rest.call('GET', '/v1/rooms/goal/sessions/s1/goal', undefined, 200)).json.status, 'paused');
  await page.click(tid('goal-resume'));
  await status('active');
  await shots(page, '10-goal');
  await page.click(tid('goal-clear'));
  await status('none');
  assert.equal((await h.rest.call('GET', '/v1/rooms/goal/sessions/s1/goal')).status, 404);

  // Without `idle` the agent pursues it in a continuation turn, credited to the goal, and completes it.
  await page.fill(tid('goal-objective'), 'write the changelog');
  await page.click(tid('goal-set'));
  await status('complete');
  await page.waitForSelector(`${panel} ${tid('goal-turn')}[data-origin="goal_continuation"]`);
  assert.match(await page.textContent(`${panel} ${tid('goal-turn')}`), /goal continuation \(current goal\)/);
  await page.waitForSelector(`${view} ${tid('turn-origin')}[data-origin="goal_continuation"]`);
  const started = (await h.rest.events('goal')).data.filter((e) => e.type === 'turn.started' && e.payload.origin === 'goal_continuation');
  assert.equal(started.length, 1);
  // Named for a person ("continuation 1"), the turn id kept in the title and data-turn.
  assert.equal(await page.textContent(`${panel} ${tid('goal-turn-name')}`), 'continuation 1');
  assert.equal(await page.getAttribute(`${panel} ${tid('goal-turn-name')}`, 'title'), `turn ${started[0].payload.turnId}`);
  assert.equal(await page.getAttribute(`${panel} ${tid('goal-turn')}`, 'data-turn'), started[0].payload.turnId);
  page.assertClean();
});
