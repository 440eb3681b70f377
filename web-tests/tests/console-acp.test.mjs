// An ACP agent in the console: the provider from the providers file in the new-session form, and a
// permission request answered with one of the agent's own options (`agentOptions` → `optionId`);
// Fork from here on an agent that cannot fork: 422 fork_unsupported shown with the agent's reason.
// The agent is the deterministic test agent the Rust tests use (target/debug/ensemble-acp-test-agent,
// built by `cargo nextest run --workspace`).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { send, sessionStatus, startSession, tid, useConsole } from '../support/console.mjs';
import { ENSEMBLE_BIN } from '../support/server.mjs';

const agent = join(dirname(ENSEMBLE_BIN), 'ensemble-acp-test-agent');
assert.ok(existsSync(agent), `the ACP test agent is missing at ${agent}: run cargo build -p ensemble-acp-test-agent`);
const dir = mkdtempSync(join(tmpdir(), 'ensemble-web-acp-'));
const providers = join(dir, 'providers.toml');
writeFileSync(providers, `[[provider]]\nid = "test-acp"\nkind = "acp"\nname = "Test ACP agent"\ncommand = ${JSON.stringify(agent)}\n`);

const h = useConsole({ serverOptions: { extraArgs: ['--providers', providers] } });
const view = tid('session-view');

test("a permission is answered with the agent's own option", { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'acp' });
  await page.click(tid('new-session'));
  await page.waitForSelector(`${tid('provider-select')} option[value="test-acp"]:not([disabled])`, { state: 'attached' });
  await startSession(page, 'a1', { 'provider-select': 'test-acp' });
  await sessionStatus(page, 'a1', 'ready');
  // The agent runs in its box, and the session says so.
  const boxed = await page.waitForSelector(`${view} ${tid('session-isolation')}[data-mode="on"]`);
  assert.match(await boxed.textContent(), /^isolated · network: no network · limits: 4096 MiB, 1024 processes/);
  await send(page, 'permission');
  await page.waitForSelector(`${view} ${tid('interaction')}[data-state="pending"]`);
  const names = await page.$$eval(`${view} [data-testid^="agent-option-"]`, (els) => els.map((e) => e.textContent));
  assert.deepEqual(names, ['Allow', 'Always allow', 'Reject', 'Never']);
  assert.ok(await page.$(`${view} ${tid('decision-cancel')}`), 'cancel stays available');
  await page.click(`${view} ${tid('agent-option-reject-always')}`);
  await page.waitForSelector(`${view} ${tid('message')}[data-done="true"]:has-text("permission: reject-always")`);
  const resolved = (await h.rest.events('acp')).data.find((e) => e.type === 'interaction.resolved');
  assert.equal(resolved.payload.decision, 'decline');
  page.assertClean();
});

test('Fork from here on an agent without session/fork shows fork_unsupported and its reason', { timeout: 30_000 }, async () => {
  const repo = join(h.server.workspace, 'acp-repo');
  mkdirSync(repo, { recursive: true });
  const env = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: repo, env });
  writeFileSync(join(repo, 'README.md'), '# readme\n');
  // A fork branches from a commit of the repository: it has one.
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'start'], { cwd: repo, env });
  await h.rest.call('POST', '/v1/rooms/acpfork/sessions', { sessionId: 'af', provider: 'test-acp', cwd: repo }, 201);
  const page = await h.open({ room: 'acpfork', session: 'af' });
  await sessionStatus(page, 'af', 'ready');
  await send(page, 'hello there');
  await page.waitForSelector(`${view} ${tid('turn-changes')}`);
  await page.click(`${view} ${tid('turn-changes')} ${tid('fork-turn')}`);
  const message = `${tid('app-message')}:has-text("fork_unsupported")`;
  await page.waitForSelector(message);
  assert.match(await page.textContent(message), /422 fork_unsupported/);
  assert.match(await page.textContent(message), /does not offer session\/fork/);
  assert.equal(await page.getAttribute(view, 'data-session'), 'af', 'the source stays selected');
  assert.equal((await h.rest.sessions('acpfork')).data.length, 1, 'no fork was made');
  page.assertClean([/status of 422/]);
});
