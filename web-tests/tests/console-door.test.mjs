// What a new user meets at the door: a refused token said as such; the fragment followed when it
// changes; the focus on a new question or approval; a question printed once; an ACP agent's
// permission as its options only, and the option picked; side conversations and goal turns with
// readable names; Escape on "Close for good?"; a copy button on code blocks; the allowed workspace
// roots in the cwd error; an ACP total-only usage line; a codex session that needs a login (the
// real codex, no API key) and the 409 its turns get.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { live, send, sessionStatus, startSession, tid, useConsole, VIEWPORTS } from '../support/console.mjs';
import { CODEX_BIN, codexArgs } from '../support/codex.mjs';
import { ENSEMBLE_BIN } from '../support/server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const testAgent = join(dirname(ENSEMBLE_BIN), 'ensemble-acp-test-agent');
assert.ok(existsSync(testAgent), `the ACP test agent is missing at ${testAgent}: run cargo build -p ensemble-acp-test-agent`);
assert.ok(existsSync(CODEX_BIN), `the codex binary is missing at ${CODEX_BIN}: run scripts/test (it installs @openai/codex into .tools/codex), or set ENSEMBLE_CODEX_BIN`);
const dir = mkdtempSync(join(tmpdir(), 'ensemble-web-door-'));
const providers = join(dir, 'providers.toml');
writeFileSync(
  providers,
  [
    `[[provider]]\nid = "test-acp"\nkind = "acp"\nname = "Test ACP agent"\ncommand = ${JSON.stringify(testAgent)}\n`,
    `[[provider]]\nid = "codex-like-acp"\nkind = "acp"\nname = "codex-acp-like agent"\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(join(here, '../support/acp-permission-agent.mjs'))}]\n`,
  ].join('\n'),
);
// codex without an API key: its sessions start `auth_required` (it calls no model, so none runs).
const codex = codexArgs();
const h = useConsole({ serverOptions: { extraArgs: ['--providers', providers, ...codex.args] } });
// After the server (and its codex processes) stopped: hooks run in the order they were added.
after(() => {
  codex.cleanup();
  rmSync(dir, { recursive: true, force: true });
});
const view = tid('session-view');
const WRONG = 'f'.repeat(64);

/** The test id of the focused element (or its tag). */
const focused = (page) => page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? document.activeElement?.tagName);

test('a wrong token is said to be refused, not missing', { timeout: 30_000 }, async () => {
  // In the URL.
  const page = await h.open({ token: WRONG, room: undefined });
  const problem = tid('token-problem');
  await page.waitForSelector(`${problem}:has-text("refused")`);
  const said = await page.textContent(problem);
  assert.match(said, /refused this token \(401\)/);
  assert.doesNotMatch(said, /No token/);
  // The refusal is said once, in the token box, not again as each call's failure.
  assert.equal(await page.$$eval(tid('app-message'), (els) => els.filter((e) => /401/.test(e.textContent)).length), 0);

  // Pasted into the box of a console opened without one: "No token" first, then "refused".
  const bare = await h.open({ token: null });
  await bare.waitForSelector(`${problem}:has-text("No token")`);
  await bare.fill(tid('token-input'), WRONG);
  await bare.click(tid('use-token'));
  await bare.waitForSelector(`${problem}:has-text("refused this token")`);
  // Typed into the fragment of the open page.
  await bare.evaluate((t) => (location.hash = `#token=${t}`), 'e'.repeat(64));
  await bare.waitForFunction(() => sessionStorage.getItem('ensemble.token') === 'e'.repeat(64));
  await bare.waitForSelector(`${problem}:has-text("refused this token")`);
  assert.doesNotMatch(await bare.textContent(problem), /No token/);
  // The right one: the box goes, the console works.
  await bare.fill(tid('token-input'), h.server.token);
  await bare.click(tid('use-token'));
  await bare.waitForSelector(problem, { state: 'detached' });
  await bare.waitForSelector('text=Forget token');
  page.assertClean([/401/]);
  bare.assertClean([/401/]);
});

test('a changed fragment is followed without a reload: room, session, side, token', { timeout: 30_000 }, async () => {
  await h.rest.createSession('hash1', 's1');
  await h.rest.createSession('hash1', 's2');
  await h.rest.createSession('hash2', 't1');
  const page = await h.open({ token: null });
  await page.evaluate(() => (window.notReloaded = true));
  await page.waitForSelector(`${tid('token-problem')}:has-text("No token")`);
  // A token given in the fragment of the open page (as pasting the printed URL into its address bar).
  await page.evaluate((t) => (location.hash = `#token=${t}&room=hash1&session=s1`), h.server.token);
  await page.waitForSelector(`${view}[data-session="s1"]`);
  await live(page);
  assert.ok(!(await page.evaluate(() => location.href)).includes(h.server.token), 'the token left the address bar');
  assert.equal(await page.evaluate(() => sessionStorage.getItem('ensemble.token')), h.server.token);
  assert.equal(await page.$(tid('token-problem')), null);
  // Another session of the room, by script.
  await page.evaluate(() => (location.hash = '#room=hash1&session=s2'));
  await page.waitForSelector(`${view}[data-session="s2"]`);
  assert.equal(await page.getAttribute(tid('session-item', '[aria-current="true"]'), 'data-session'), 's2');
  // Another room, typed (a same-document navigation to a new fragment).
  await page.goto(`${h.server.baseUrl}/#room=hash2&session=t1`);
  await page.waitForSelector(`${view}[data-session="t1"]`);
  assert.equal(await page.getAttribute(tid('room-item', '[aria-current="true"]'), 'data-room'), 'hash2');
  // A side conversation named in the fragment opens beside its session.
  const side = (await h.rest.call('POST', '/v1/rooms/hash1/sessions/s1/sides', { requestId: 'door-side-1' }, 201)).json.session.sessionId;
  await page.evaluate((id) => (location.hash = `#room=hash1&session=s1&side=${id}`), side);
  await page.waitForSelector(tid('side-panel', `[data-session="${side}"]`));
  // The fragment left without a room: no room open.
  await page.evaluate(() => (location.hash = '#'));
  await page.waitForSelector(`${tid('connection-status')}[data-state="idle"]`);
  assert.equal(await page.$(view), null);
  assert.equal(await page.evaluate(() => window.notReloaded), true, 'the page was not reloaded');
  page.assertClean();
});

test('a new question or approval takes the focus to its answer, once', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'focus' });
  await startSession(page, 'f2');
  await startSession(page, 'f1');
  // An approval: the first decision.
  await page.click(`${view} ${tid('composer')}`);
  await send(page, '/run make test');
  await page.waitForSelector(`${view} ${tid('interaction')}[data-state="pending"]`);
  await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'decision-accept');
  await page.keyboard.press('Enter');
  await page.waitForSelector(`${view} ${tid('interaction')}[data-state="resolved"]`);
  await sessionStatus(page, 'f1', 'ready');
  // A question: its answer input; Enter answers it.
  await page.click(`${view} ${tid('composer')}`);
  await send(page, '/ask Which colour?');
  const pending = `${view} ${tid('interaction')}[data-state="pending"]`;
  await page.waitForSelector(pending);
  await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'answer-input');
  // Not taken again for the same question: back in the composer, away and back to the session.
  await page.click(`${view} ${tid('composer')}`);
  await page.keyboard.type('a draft');
  await page.click(tid('session-item', '[data-session="f2"]'));
  await page.waitForSelector(`${view}[data-session="f2"]`);
  await page.click(tid('session-item', '[data-session="f1"]'));
  await page.waitForSelector(pending);
  // Past the frames in which Preact runs the remounted card's effects (after the next frame).
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 0)))));
  assert.equal(await focused(page), 'session-item', 'the question took the focus again');
  await page.fill(`${pending} ${tid('answer-input')}`, 'green');
  await page.press(`${pending} ${tid('answer-input')}`, 'Enter');
  await page.waitForSelector(`${view} ${tid('message')}[data-done="true"]:has-text("You answered: green")`);
  page.assertClean();
});

test('a question is printed once', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'once' });
  await startSession(page, 'q1');
  await send(page, '/ask Which colour should the button be?');
  const card = `${view} ${tid('interaction')}[data-state="pending"]`;
  await page.waitForSelector(card);
  const text = await page.textContent(card);
  assert.equal(text.split('Which colour should the button be?').length - 1, 1, text);
  // It is the input's label.
  assert.equal(await page.textContent(`${card} ${tid('question-text')}`), 'Which colour should the button be?');
  page.assertClean();
});

test("an ACP permission shows the agent's options as buttons only, then the option picked", { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'perm' });
  await page.click(tid('new-session'));
  await page.waitForSelector(`${tid('provider-select')} option[value="codex-like-acp"]:not([disabled])`, { state: 'attached' });
  await startSession(page, 'p1', { 'provider-select': 'codex-like-acp' });
  await sessionStatus(page, 'p1', 'ready');
  await send(page, 'clean and rebuild');
  const card = `${view} ${tid('interaction')}`;
  await page.waitForSelector(`${card}[data-state="pending"]`);
  const text = await page.textContent(card);
  // The agent's own list of its decisions is not printed; its reason is.
  assert.doesNotMatch(text, /Available Decisions|ApprovedExecpolicyAmendment|Abort/, text);
  assert.match(await page.textContent(`${card} ${tid('interaction-detail')}`), /wants to remove the build directory/);
  const names = await page.$$eval(`${card} [data-testid^="agent-option-"]`, (els) => els.map((e) => e.textContent));
  assert.deepEqual(names, ['Yes, proceed', "Yes, and don't ask again for commands that start with `rm -rf`", 'No, and tell Codex what to do differently']);
  // Picked: the card says which option, though its decision (decline) names no option by itself.
  await page.click(`${card} ${tid('agent-option-abort')}`);
  await page.waitForSelector(`${view} ${tid('message')}[data-done="true"]:has-text("permission: abort")`);
  const resolution = `${card} ${tid('interaction-resolution')}`;
  await page.waitForSelector(`${resolution}[data-option="abort"]`);
  assert.match(await page.textContent(resolution), /^Chose “No, and tell Codex what to do differently” \(declined by admin\)$/);
  assert.equal(await page.$(`${card} [data-testid^="agent-option-"]`), null, 'no buttons once answered');

  // The test agent: "Never" is one of two reject options; after a reload the only accept option is named.
  await page.click(tid('new-session'));
  await startSession(page, 'p2', { 'provider-select': 'test-acp' });
  await sessionStatus(page, 'p2', 'ready');
  await send(page, 'permission');
  await page.waitForSelector(`${card}[data-state="pending"]`);
  await page.click(`${card} ${tid('agent-option-allow-once')}`);
  await page.waitForSelector(`${view} ${tid('message')}[data-done="true"]:has-text("permission: allow-once")`);
  await page.reload();
  await page.waitForSelector(`${view}[data-session="p2"] ${tid('interaction-resolution')}[data-option="allow-once"]`);
  assert.match(await page.textContent(`${view} ${tid('interaction-resolution')}`), /^Chose “Allow” \(accepted by admin\)$/);
  page.assertClean();
});

test('a side conversation has a readable name', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'sidename' });
  await startSession(page, 's1');
  await page.waitForSelector(`${tid('open-side')}:not([disabled])`);
  await page.click(tid('open-side'));
  const side = tid('side-panel');
  await page.waitForSelector(side);
  const sideId = await page.getAttribute(side, 'data-session');
  const title = tid('side-title');
  assert.equal(await page.textContent(title), 'Side conversation 1');
  await send(page, 'what does the parser do with tabs and other whitespace', { within: side });
  await page.waitForSelector(`${title}:has-text("Side conversation 1: what does the parser do with…")`);
  const chip = tid('side-item', `[data-session="${sideId}"]`);
  assert.equal(await page.textContent(chip), 'Side conversation 1: what does the parser do with…');
  // The id is still there for whoever needs it, not in the text.
  assert.equal(await page.getAttribute(chip, 'title'), sideId);
  assert.ok(!(await page.textContent(side)).includes(sideId));
  assert.ok(!(await page.textContent(tid('session-view', ' .session-head .actions'))).includes(sideId));
  page.assertClean();
});

test('goal continuation turns are named, their ids kept in a title', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'goalnames' });
  await startSession(page, 'g1');
  const panel = tid('goal-panel');
  await page.fill(tid('goal-objective'), 'write the changelog');
  await page.click(tid('goal-set'));
  await page.waitForSelector(`${panel} ${tid('goal-status')}[data-status="complete"]`);
  const started = (await h.rest.events('goalnames')).data.filter((e) => e.type === 'turn.started' && e.payload.origin === 'goal_continuation');
  assert.equal(started.length, 1);
  const turnId = started[0].payload.turnId;
  const name = `${panel} ${tid('goal-turn-name')}`;
  await page.waitForSelector(name);
  assert.equal(await page.textContent(name), 'continuation 1');
  assert.equal(await page.getAttribute(name, 'title'), `turn ${turnId}`);
  assert.ok(!(await page.textContent(panel)).includes(turnId), 'no raw turn id in the goal panel');
  page.assertClean();
});

test('Escape dismisses "Close for good?" and keeps the session', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'esc' });
  await startSession(page, 'e1');
  await page.click(tid('close-session'));
  const dialog = tid('confirm-close-dialog');
  await page.waitForSelector(dialog);
  assert.equal(await focused(page), 'keep-session', 'the focus is on the safe choice');
  await page.keyboard.press('Escape');
  await page.waitForSelector(dialog, { state: 'detached' });
  // The focus is back on the button that opened it.
  await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'close-session', undefined, { timeout: 5_000 });
  assert.notEqual((await h.rest.sessions('esc')).data.find((s) => s.sessionId === 'e1').status, 'completed');
  await sessionStatus(page, 'e1', 'ready');
  // Escape from elsewhere on the page too (the dialog opened with the mouse, then a click away).
  await page.click(tid('close-session'));
  await page.waitForSelector(dialog);
  await page.click(`${view} ${tid('composer')}`);
  await page.keyboard.press('Escape');
  await page.waitForSelector(dialog, { state: 'detached' });
  assert.equal((await h.rest.sessions('esc')).data.find((s) => s.sessionId === 'e1').status, 'ready');
  page.assertClean();
});

test('a code block has a copy button that writes it to the clipboard', { timeout: 30_000 }, async () => {
  const context = await h.browser.newContext({ viewport: VIEWPORTS.desktop, permissions: ['clipboard-read', 'clipboard-write'] });
  h.contexts.push(context);
  const page = await h.open({ room: 'copy', context });
  await startSession(page, 'c1');
  // The person's own message is Markdown too (the scripted agent's echo is one line).
  await send(page, 'run this:\n```sh\ncargo test --workspace\n```');
  const block = `${view} ${tid('user-message')} .codeblock`;
  await page.waitForSelector(block);
  await page.click(`${block} ${tid('copy-code')}`);
  await page.waitForSelector(`${block} ${tid('copy-code')}[data-state="copied"]`);
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), 'cargo test --workspace');
  page.assertClean();
});

test('a cwd outside the workspace: the error names the allowed roots', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'roots' });
  await page.waitForSelector(tid('new-session-form'));
  await page.fill(tid('session-id-input'), 'r1');
  await page.fill(tid('cwd-input'), '/etc');
  await page.click(tid('start-session'));
  const banner = `${tid('app-message')}:has-text("cwd_outside_workspace")`;
  await page.waitForSelector(banner);
  const text = await page.textContent(banner);
  assert.ok(text.includes(`allowed are ${h.server.workspace} `), text);
  assert.equal((await h.rest.sessions('roots')).data.length, 0);
  page.assertClean([/400/]);
});

test('an ACP agent that reports only a total: the usage line says so', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'usage' });
  await page.click(tid('new-session'));
  await page.waitForSelector(`${tid('provider-select')} option[value="test-acp"]:not([disabled])`, { state: 'attached' });
  await startSession(page, 'u1', { 'provider-select': 'test-acp' });
  await sessionStatus(page, 'u1', 'ready');
  // The test agent's `tool`: usage_update used=10 size=100 (no input/output split).
  await send(page, 'tool');
  const usage = `${view} ${tid('usage')}`;
  await page.waitForSelector(usage);
  assert.equal(await page.textContent(usage), 'Tokens: 10 (total only) · context window 100');
  page.assertClean();
});

test('codex without a login: the session says so, and a turn is refused with that message', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'auth' });
  await page.click(tid('new-session'));
  await page.waitForSelector(`${tid('provider-select')} option[value="codex"]:not([disabled])`, { state: 'attached' });
  await startSession(page, 'x1', { 'provider-select': 'codex' });
  const warn = `${view} ${tid('auth-required')}`;
  await page.waitForSelector(warn);
  const session = (await h.rest.sessions('auth')).data.find((s) => s.sessionId === 'x1');
  assert.equal(session.authState, 'auth_required');
  assert.equal(await page.textContent(warn), `Authentication needed: ${session.authMessage}`);
  assert.match(session.authMessage, /MOCK_API_KEY/);
  // A turn: 409 auth_required, said with the provider's message; the draft stays in the composer.
  await page.fill(`${view} ${tid('composer')}`, 'hello?');
  await page.click(`${view} ${tid('send')}`);
  const banner = `${tid('app-message')}:has-text("auth_required")`;
  await page.waitForSelector(banner);
  const text = await page.textContent(banner);
  assert.ok(text.startsWith(`sending failed: the agent needs authentication before it can take a turn: ${session.authMessage}`), text);
  assert.match(text, /\(409 auth_required\)/);
  assert.equal(await page.inputValue(`${view} ${tid('composer')}`), 'hello?');
  assert.equal((await h.rest.sessions('auth')).data.find((s) => s.sessionId === 'x1').activeTurnId ?? null, null);
  page.assertClean([/409/]);
});
