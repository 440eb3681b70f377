// The real codex (against the mock model API, `target/debug/mock-model`) in the console: codex
// announces a command, then asks whether to run it; the transcript reads in the order things came
// in: the approval, then the command running with its output. A codex question (its title is the
// question) is printed once.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, test } from 'node:test';
import { sessionStatus, tid, useConsole } from '../support/console.mjs';
import { CODEX_BIN, codexArgs, MOCK_KEY, MOCK_MODEL_BIN, startMockModel } from '../support/codex.mjs';

assert.ok(existsSync(CODEX_BIN), `the codex binary is missing at ${CODEX_BIN}: run scripts/test (it installs @openai/codex into .tools/codex), or set ENSEMBLE_CODEX_BIN`);
assert.ok(existsSync(MOCK_MODEL_BIN), `the mock model is missing at ${MOCK_MODEL_BIN}: run cargo build -p ensemble-mock-model`);

// The model API first: the server's flags point codex at it.
const mock = await startMockModel();
const codex = codexArgs({ baseUrl: mock.baseUrl, key: MOCK_KEY });
const h = useConsole({ serverOptions: { extraArgs: codex.args } });
// After the server (and its codex processes) stopped: hooks run in the order they were added.
after(async () => {
  await mock.stop();
  codex.cleanup();
});
const view = tid('session-view');

/** Starts a codex session over REST (settings the form does not offer), then opens the console on it. */
async function codexSession(room, id, settings) {
  const r = await h.rest.call('POST', `/v1/rooms/${room}/sessions`, { sessionId: id, provider: 'codex', settings }, 201);
  assert.notEqual(r.json.authState, 'auth_required', JSON.stringify(r.json));
  const page = await h.open({ room, session: id });
  await page.waitForSelector(`${view}[data-session="${id}"]`);
  await sessionStatus(page, id, 'ready');
  return page;
}

/** Types into the composer and sends (not waiting for it to empty: the focus may move to an answer). */
async function say(page, text) {
  await page.fill(`${view} ${tid('composer')}`, text);
  await page.click(`${view} ${tid('send')}`);
}

test('codex: the approval comes before the command it gated, as its events did', { timeout: 30_000 }, async () => {
  const page = await codexSession('order', 'c1', { approvalPolicy: 'untrusted', sandbox: 'danger-full-access' });
  // The mock model's SHELL: a command that writes a file, which `untrusted` asks about.
  await say(page, 'SHELL please');
  const ask = `${view} ${tid('interaction')}[data-kind="commandApproval"]`;
  await page.waitForSelector(`${ask}[data-state="pending"]`);
  const events = (await h.rest.events('order')).data;
  const requested = events.find((e) => e.type === 'interaction.requested');
  const callId = requested.payload.callId;
  // codex announced the command first: that is why the order matters.
  const started = events.findIndex((e) => e.type === 'call.started' && e.payload.callId === callId);
  assert.ok(started >= 0 && started < events.indexOf(requested), events.map((e) => e.type).join(' '));
  const call = `${view} ${tid('call')}[data-call="${callId}"]`;
  await page.waitForSelector(`${call}[data-gated="true"]`);
  assert.match(await page.textContent(call), /awaiting approval/);
  /** Whether the approval comes before the call in the transcript. */
  const approvalFirst = () => page.$eval(ask, (a, sel) => Boolean(a.compareDocumentPosition(document.querySelector(sel)) & Node.DOCUMENT_POSITION_FOLLOWING), call);
  assert.equal(await approvalFirst(), true, 'the call is rendered above its approval');
  await page.click(`${ask} ${tid('decision-accept')}`);
  await page.waitForSelector(`${call}[data-status="completed"]`);
  assert.match(await page.textContent(`${call} ${tid('call-output')}`), /mock-shell-ran/);
  assert.equal(await approvalFirst(), true, 'still after its approval once it ran');
  assert.equal(await page.$(`${call}[data-gated]`), null);
  await sessionStatus(page, 'c1', 'ready');
  // A reload replays the log into the same order.
  await page.reload();
  await page.waitForSelector(`${call}[data-status="completed"]`);
  assert.equal(await approvalFirst(), true, 'the order after a reload');
  page.assertClean();
});

test('codex: a question (its title is the question) is printed once', { timeout: 30_000 }, async () => {
  const page = await codexSession('ask', 'c2', { collaborationMode: 'plan' });
  await say(page, 'ASKUSER');
  const card = `${view} ${tid('interaction')}[data-kind="userInput"][data-state="pending"]`;
  await page.waitForSelector(card);
  const text = await page.textContent(card);
  assert.equal(text.split('Which color do you prefer?').length - 1, 1, text);
  // The focus is on its answer.
  await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'answer-input');
  page.assertClean();
});
