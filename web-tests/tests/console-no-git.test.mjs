// A server whose git cannot be run (`--git-bin` names nothing): a new worktree session from the form
// is refused with 503 git_unavailable, shown with its message, and plain sessions still work.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { send, sessionStatus, startSession, tid, useConsole } from '../support/console.mjs';

const h = useConsole({ serverOptions: { extraArgs: ['--git-bin', '/nonexistent/git'] } });
const view = tid('session-view');

test('without git a worktree session is refused with git_unavailable and plain sessions work', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'nogit' });
  await page.click(tid('new-session'));
  await page.fill(tid('session-id-input'), 'wt');
  await page.check(tid('worktree-toggle'));
  await page.fill(tid('worktree-repo'), h.server.workspace);
  await page.click(tid('start-session'));
  const message = `${tid('app-message')}:has-text("git_unavailable")`;
  await page.waitForSelector(message);
  assert.match(await page.textContent(message), /503 git_unavailable/);
  assert.match(await page.textContent(message), /\/nonexistent\/git/, 'names the git it tried');
  assert.equal((await h.rest.sessions('nogit')).data.length, 0, 'no session was made');
  // A plain session starts and runs a turn.
  if (!(await page.$(tid('new-session-form')))) await page.click(tid('new-session'));
  await page.uncheck(tid('worktree-toggle'));
  await startSession(page, 'plain');
  await sessionStatus(page, 'plain', 'ready');
  await send(page, 'hello');
  await page.waitForSelector(`${view} ${tid('message')}[data-done="true"]`);
  page.assertClean([/status of 503/]);
});
