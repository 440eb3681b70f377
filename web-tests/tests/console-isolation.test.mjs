// A server run with isolation off: the new-session form warns for every provider, and a session's
// head says its agent is not boxed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sessionStatus, startSession, tid, useConsole } from '../support/console.mjs';

const h = useConsole({ serverOptions: { extraArgs: ['--isolation', 'off', '--codex-bin', '/nonexistent/codex'] } });

test('with isolation off the console warns before and after a start', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'off' });
  await page.click(tid('new-session'));
  const warnings = await page.waitForSelector(tid('isolation-warnings'));
  const scripted = await warnings.$('li[data-provider="scripted"]');
  assert.ok(scripted, 'the scripted provider is warned about');
  assert.match(await scripted.textContent(), /isolation off: .*whatever the server's user can/);
  const option = await page.textContent(`${tid('provider-select')} option[value="scripted"]`);
  assert.match(option, /isolation off/);
  await startSession(page, 'o1', {});
  await sessionStatus(page, 'o1', 'ready');
  const line = await page.waitForSelector(`${tid('session-view')} ${tid('session-isolation')}[data-mode="off"]`);
  assert.match(await line.textContent(), /isolation off/);
  assert.match(await line.getAttribute('class'), /warn/);
  page.assertClean();
});
