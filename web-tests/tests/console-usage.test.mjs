// The burn and the budget in the console, against the scripted agent (`/spend TOKENS [COST]`
// reports that many more tokens at once; every word in and out counts as a token too): the session
// header shows what the server's `GET …/usage` says was spent after a turn; a budget set from the
// header's Budget… form reaches the server (checked over REST); a turn that spends past it shows the
// budget reached; a further message is refused (409 budget_exhausted, said beside the composer, the
// text kept); a higher budget lets that message go. The room panel shows the room's usage and sets
// and clears the room's budget; a viewer sees the figures without the form.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { waitFor } from '../support/api.mjs';
import { send, sessionStatus, shots, startSession, tid, unnamed, useConsole } from '../support/console.mjs';

const h = useConsole();
const view = tid('session-view');
const head = `${view} ${tid('session-usage')}`;
const roomPanel = tid('room-usage');

const usageOf = async (room, session) => (await h.rest.call('GET', `/v1/rooms/${room}/sessions/${session}/usage`, undefined, 200)).json;
const roomUsageOf = async (room) => (await h.rest.call('GET', `/v1/rooms/${room}/usage`, undefined, 200)).json;
/** "1,234" as the console writes counts. */
const count = (n) => n.toLocaleString('en-US');
/** Waits until the log has `n` ended turns in `room`. */
const turnsEnded = (room, n) =>
  waitFor(async () => (await h.rest.events(room)).data.filter((e) => /^turn\.(completed|failed|canceled)$/.test(e.type)).length >= n, { what: `${n} ended turns` });
/** Waits until an element's `data-tokens` is `tokens` (the header or the room panel). */
const showsTokens = (page, sel, tokens) => page.waitForSelector(`${sel}[data-tokens="${tokens}"]`);

test('the header shows the burn; a budget set from the console stops new turns once reached; raising it lets them run', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'u' });
  await startSession(page, 'u1');
  await sessionStatus(page, 'u1', 'ready');
  // Before any turn: nothing spent, no budget, no meter.
  await showsTokens(page, head, 0);
  assert.equal(await page.textContent(`${head} ${tid('usage-text')}`), '0 tokens');
  assert.equal(await page.$(`${head} ${tid('usage-meter')}`), null);

  // A turn that spends: the header says what the server's ledger says, once the turn has ended.
  await send(page, '/spend 1000');
  await turnsEnded('u', 1);
  const first = await usageOf('u', 'u1');
  assert.ok(first.state.tokens >= 1000, JSON.stringify(first.state));
  await showsTokens(page, head, first.state.tokens);
  assert.equal(await page.textContent(`${head} ${tid('usage-text')}`), `${count(first.state.tokens)} tokens`);
  assert.equal(await page.getAttribute(head, 'data-exhausted'), 'false');
  await page.waitForSelector(`${roomPanel}[data-tokens="${first.state.tokens}"]`);

  // Budget…: a limit the form refuses first (said in the form), then 2,000 tokens.
  await page.click(`${head} ${tid('budget-open')}`);
  const tokensInput = `${head} ${tid('budget-max-tokens')}`;
  await page.waitForFunction((sel) => document.activeElement === document.querySelector(sel), tokensInput);
  assert.equal(await page.inputValue(tokensInput), '', 'no budget yet');
  assert.deepEqual(await unnamed(page), [], 'every control of the budget form has a name');
  await page.fill(tokensInput, '0');
  await page.click(`${head} ${tid('budget-save')}`);
  await page.waitForSelector(`${head} ${tid('budget-error')}:has-text("at least 1")`);
  assert.equal(await page.getAttribute(`${head} ${tid('budget-error')}`, 'role'), 'alert');
  await shots(page, 'usage-budget-form');
  await page.fill(tokensInput, '2000');
  await page.selectOption(`${head} ${tid('budget-on-exhausted')}`, 'finish');
  await page.click(`${head} ${tid('budget-save')}`);
  await page.waitForSelector(`${head} ${tid('budget-form')}`, { state: 'detached' });
  // The focus goes back to Budget…, and the server has the budget.
  await page.waitForFunction((sel) => document.activeElement === document.querySelector(sel), `${head} ${tid('budget-open')}`);
  const set = await usageOf('u', 'u1');
  assert.equal(set.budget?.maxTokens, 2000);
  assert.equal(set.budget?.onExhausted, 'finish');
  assert.equal(set.budget?.maxCost ?? null, null);
  await page.waitForSelector(`${head} ${tid('usage-text')}:text-is("${count(first.state.tokens)} of 2,000 tokens")`);
  const share = Number(await page.getAttribute(`${head} ${tid('usage-meter')}`, 'value'));
  assert.ok(Math.abs(share - first.state.tokens / 2000) < 1e-9, `meter at ${share}`);
  await shots(page, 'usage-budget');

  // A turn that spends past it: reached, the meter full, the agent's turn let finish.
  await send(page, '/spend 1500');
  await turnsEnded('u', 2);
  const over = await usageOf('u', 'u1');
  assert.equal(over.state.exhausted, true);
  await page.waitForSelector(`${head}[data-exhausted="true"][data-tokens="${over.state.tokens}"] ${tid('usage-exhausted')}`);
  assert.equal(await page.getAttribute(head, 'data-level'), 'exhausted');
  assert.equal(Number(await page.getAttribute(`${head} ${tid('usage-meter')}`, 'value')), 1);
  // The server's notice, once, in the transcript.
  await page.waitForSelector(`${view} ${tid('notice')}:has-text("budget is reached")`);

  // A further message is refused: the server's message beside the composer, the text kept.
  const composer = `${view} ${tid('composer')}`;
  await page.fill(composer, 'one more, please');
  await page.click(`${view} ${tid('send')}`);
  const error = `${view} ${tid('submit-error')}`;
  await page.waitForSelector(error);
  assert.match(await page.textContent(error), /^Not sent: the session's budget is reached: this session has spent [\d,]+ of 2,000 tokens; raise it with Budget… \(409 budget_exhausted\)/);
  assert.equal(await page.getAttribute(error, 'role'), 'alert');
  assert.equal(await page.inputValue(composer), 'one more, please');
  assert.equal((await h.rest.events('u')).data.filter((e) => e.type === 'turn.started').length, 2, 'no turn started');
  await shots(page, 'usage-exhausted');

  // A higher budget (the form shows the one in force), canceling the running turn when reached.
  await page.click(`${head} ${tid('budget-open')}`);
  assert.equal(await page.inputValue(tokensInput), '2000');
  await page.fill(tokensInput, '10,000');
  await page.selectOption(`${head} ${tid('budget-on-exhausted')}`, 'cancel');
  await page.click(`${head} ${tid('budget-save')}`);
  await page.waitForSelector(`${head}[data-exhausted="false"]`);
  const raised = await usageOf('u', 'u1');
  assert.deepEqual([raised.budget?.maxTokens, raised.budget?.onExhausted, raised.state.exhausted], [10000, 'cancel', false]);
  await page.waitForSelector(`${head} ${tid('usage-text')}:text-is("${count(raised.state.tokens)} of 10,000 tokens")`);
  // The kept text goes now: the turn runs, and the error is gone.
  await page.click(`${view} ${tid('send')}`);
  await page.waitForSelector(`${view} ${tid('message')}[data-done="true"]:has-text("You said: one more, please")`);
  await page.waitForSelector(error, { state: 'detached' });
  await turnsEnded('u', 3);
  const after = await usageOf('u', 'u1');
  await showsTokens(page, head, after.state.tokens);
  assert.ok(after.state.tokens > raised.state.tokens);

  // Clear: back to the server's default (none here).
  await page.click(`${head} ${tid('budget-open')}`);
  await page.click(`${head} ${tid('budget-clear')}`);
  await page.waitForSelector(`${head} ${tid('usage-meter')}`, { state: 'detached' });
  assert.equal((await usageOf('u', 'u1')).budget ?? null, null);
  assert.equal(await page.textContent(`${head} ${tid('usage-text')}`), `${count(after.state.tokens)} tokens`);
  page.assertClean([/status of 409/]);
});

test("the room panel: the room's usage by session, its budget set and cleared; a viewer has no Budget…", { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'ru' });
  await startSession(page, 'a');
  await send(page, '/spend 300 0.25');
  await turnsEnded('ru', 1);
  await startSession(page, 'b');
  await send(page, '/spend 200');
  await turnsEnded('ru', 2);
  const spent = await roomUsageOf('ru');
  await page.waitForSelector(`${roomPanel}[data-tokens="${spent.state.tokens}"]`);
  // The cost, in the agent's currency, once reported.
  assert.match(await page.textContent(`${roomPanel} ${tid('usage-text')}`), new RegExp(`^${count(spent.state.tokens)} tokens · \\$0\\.25$`));
  // Its header says this session's share alone.
  const b = await usageOf('ru', 'b');
  await showsTokens(page, head, b.state.tokens);
  await page.click(`${roomPanel} summary`);
  assert.deepEqual(await page.$$eval(`${roomPanel} ${tid('room-usage-sessions')} li`, (els) => els.map((e) => e.dataset.session)), ['a', 'b']);

  // A room budget from the panel: on the server, shown against it.
  await page.click(`${roomPanel} ${tid('budget-open')}`);
  await page.fill(`${roomPanel} ${tid('budget-max-tokens')}`, '100000');
  await page.fill(`${roomPanel} ${tid('budget-max-cost')}`, '5');
  await page.click(`${roomPanel} ${tid('budget-save')}`);
  await page.waitForSelector(`${roomPanel} ${tid('budget-form')}`, { state: 'detached' });
  const set = await roomUsageOf('ru');
  assert.deepEqual([set.budget?.maxTokens, set.budget?.maxCost], [100000, 5]);
  await page.waitForSelector(`${roomPanel} ${tid('usage-text')}:text-is("${count(spent.state.tokens)} of 100,000 tokens · $0.25 of $5.00")`);
  assert.ok(await page.$(`${roomPanel} ${tid('usage-meter')}`));
  await shots(page, 'usage-room');

  // A viewer: the figures, no Budget… anywhere.
  const viewer = (await h.rest.call('POST', '/v1/tokens', { name: 'wall', role: 'viewer', rooms: ['ru'], ttlSecs: 3600 }, 201)).json;
  const watcher = await h.open({ room: 'ru', session: 'a', token: viewer.secret });
  const a = await usageOf('ru', 'a');
  await showsTokens(watcher, head, a.state.tokens);
  await watcher.waitForSelector(`${roomPanel}[data-tokens="${spent.state.tokens}"]`);
  assert.equal(await watcher.$(tid('budget-open')), null, 'a viewer sets no budget');
  watcher.assertClean();

  // Clear: the room has no budget of its own again.
  await page.click(`${roomPanel} ${tid('budget-open')}`);
  await page.click(`${roomPanel} ${tid('budget-clear')}`);
  await page.waitForSelector(`${roomPanel} ${tid('usage-meter')}`, { state: 'detached' });
  assert.equal((await roomUsageOf('ru')).budget ?? null, null);
  page.assertClean();
});
