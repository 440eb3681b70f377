// Workspace sessions in the console: a turn's Changes block (the file, its status and counts, its
// diff), Restore to before a turn (asked first; Escape keeps the files) and Undo, checked on disk;
// Fork from a turn (the new session selected, its header naming the source, its files those of that
// turn); a worktree session started from the form, Commit… (the commit on its branch in `git log`,
// then "nothing to commit"), the file tree, a preview and the search, the whole session's changes;
// the form's worktree errors with their messages.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { send, shots, tid, useConsole } from '../support/console.mjs';

const h = useConsole();
const view = tid('session-view');

/** git with no user or system configuration of this machine. */
function git(cwd, ...args) {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
    cwd,
    env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
    encoding: 'utf8',
  });
}

/** A repository with one commit (README.md) on `main`, in the server's workspace root. */
function makeRepo(name) {
  const dir = join(h.server.workspace, name);
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  writeFileSync(join(dir, 'README.md'), '# readme\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'init');
  return dir;
}

const fileRow = (path, more = '') => `${tid('changed-file', `[data-path="${path}"]`)}${more}`;

test('a turn\'s changes, its diff, restore (asked first) and undo, on disk', { timeout: 30_000 }, async () => {
  const repo = makeRepo('repo-restore');
  const s = (await h.rest.call('POST', '/v1/rooms/ws1/sessions', { sessionId: 'w1', cwd: repo }, 201)).json;
  assert.equal(s.workspace?.checkpoints, true, 'a session in a git repository is checkpointed');
  const page = await h.open({ room: 'ws1', session: 'w1' });
  await page.waitForSelector(tid('session-workspace'));
  assert.match(await page.textContent(tid('session-workspace')), /checkpoints around every turn/);
  await send(page, '/write notes.md hello');
  const block = `${view} ${tid('turn-changes')}`;
  await page.waitForSelector(`${block} ${fileRow('notes.md')}`);
  const row = await page.$(`${block} ${fileRow('notes.md')}`);
  assert.equal(await row.getAttribute('data-status'), 'added');
  assert.equal(await row.getAttribute('data-added'), '1');
  assert.match(await row.textContent(), /notes\.md.*added.*\+1\s*−0/);
  assert.match(await page.textContent(`${block} ${tid('changes-summary')}`), /1 file · \+1 −0/);
  // The block follows the turn's end in the transcript.
  const order = await page.$$eval(`${view} [data-testid="transcript"] > *`, (els) => els.map((e) => e.getAttribute('data-testid')));
  assert.ok(order.indexOf('turn-changes') > order.lastIndexOf('message'), `changes after the reply: ${order}`);

  // Its diff, fetched when opened.
  await page.click(`${block} ${fileRow('notes.md')} ${tid('changed-file-toggle')}`);
  await page.waitForSelector(`${block} ${tid('changed-file-diff')} ${tid('diff')} tr.d-add`);
  assert.deepEqual(await page.$$eval(`${block} ${tid('changed-file-diff')} tr.d-add td.code`, (tds) => tds.map((t) => t.textContent.replace(/^added: /, ''))), ['hello']);
  assert.equal(await page.getAttribute(`${block} ${fileRow('notes.md')} ${tid('changed-file-toggle')}`, 'aria-expanded'), 'true');
  assert.ok(existsSync(join(repo, 'notes.md')));
  await shots(page, 'workspace-turn-changes');

  // Restore asks first; Escape keeps the files.
  await page.click(`${block} ${tid('restore-turn')}`);
  await page.waitForSelector(tid('confirm-restore-dialog'));
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-testid')), 'keep-files');
  await page.keyboard.press('Escape');
  await page.waitForSelector(tid('confirm-restore-dialog'), { state: 'detached' });
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-testid')), 'restore-turn', 'the focus is back on the button');
  assert.ok(existsSync(join(repo, 'notes.md')), 'Escape restored nothing');
  assert.equal(await page.$$eval(tid('workspace-restored'), (els) => els.length), 0);

  // Confirmed: the file is gone, and the transcript says so with an Undo.
  await page.click(`${block} ${tid('restore-turn')}`);
  await page.click(tid('confirm-restore'));
  // The event is published once the tree is restored: the disk is as it will be.
  await page.waitForSelector(`${view} ${tid('workspace-restored')}`);
  assert.equal(existsSync(join(repo, 'notes.md')), false, 'notes.md removed by the restore');
  const restored = await h.rest.call('GET', '/v1/rooms/ws1/events?after=0&limit=1000', undefined, 200);
  const ev = restored.json.data.filter((e) => e.type === 'workspace.restored');
  const changes = restored.json.data.find((e) => e.type === 'turn.changes');
  assert.equal(ev.length, 1);
  assert.equal(ev[0].payload.checkpoint, changes.payload.before, 'restored to the checkpoint before the turn');

  // Undo: the file is back.
  await page.click(`${view} ${tid('workspace-restored')} ${tid('undo-restore')}`);
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="workspace-restored"]').length === 2);
  assert.ok(existsSync(join(repo, 'notes.md')), 'notes.md back after Undo');
  assert.match(readFileSync(join(repo, 'notes.md'), 'utf8'), /^hello/);
  const undone = (await h.rest.call('GET', '/v1/rooms/ws1/events?after=0&limit=1000', undefined, 200)).json.data.filter((e) => e.type === 'workspace.restored');
  assert.equal(undone[1].payload.checkpoint, ev[0].payload.undo, 'Undo restores the restore\'s undo checkpoint');
  page.assertClean();
});

test('fork from a turn: the new session is selected, names its source, and has that turn\'s files only', { timeout: 30_000 }, async () => {
  const repo = makeRepo('repo-fork');
  await h.rest.call('POST', '/v1/rooms/ws2/sessions', { sessionId: 'f1', cwd: repo, title: 'Forkable' }, 201);
  const page = await h.open({ room: 'ws2', session: 'f1' });
  await send(page, '/write first.md one');
  await page.waitForSelector(`${view} ${tid('turn-changes')} ${fileRow('first.md')}`);
  await send(page, '/write second.md two');
  await page.waitForSelector(`${view} ${tid('turn-changes')} ${fileRow('second.md')}`);
  const firstTurn = await page.getAttribute(`${view} ${tid('turn-changes')}:has(${fileRow('first.md')})`, 'data-turn');
  await page.click(`${view} ${tid('turn-changes', `[data-turn="${firstTurn}"]`)} ${tid('fork-turn')}`);
  await page.waitForSelector(`${view}:not([data-session="f1"]) ${tid('session-forked-from')}`);
  const forkId = await page.getAttribute(view, 'data-session');
  assert.notEqual(forkId, 'f1');
  assert.match(await page.textContent(tid('session-forked-from')), /forked from Forkable at turn 1/);
  assert.equal(await page.getAttribute(tid('session-forked-from'), 'data-turn'), firstTurn);
  assert.match(await page.textContent(tid('session-workspace')), /^worktree of .*repo-fork on branch /);
  assert.ok(await page.$(tid('session-item', `[data-session="${forkId}"]`)), 'listed with the sessions');
  assert.match(await page.evaluate(() => location.hash), new RegExp(`session=${forkId}`));
  // Its files: the first turn's, not the second's.
  await page.click(tid('pane-files'));
  await page.waitForSelector(`${tid('file-tree')} ${tid('file-entry', '[data-path="first.md"]')}`);
  assert.deepEqual(await page.$$eval(`${tid('file-tree')} ${tid('file-entry')}`, (els) => els.map((e) => e.getAttribute('data-path')).sort()), ['README.md', 'first.md']);
  const fork = (await h.rest.call('GET', `/v1/rooms/ws2/sessions/${forkId}`, undefined, 200)).json;
  assert.ok(existsSync(join(fork.cwd, 'first.md')) && !existsSync(join(fork.cwd, 'second.md')), `on disk in ${fork.cwd}`);
  // The source is one click away.
  await page.click(tid('fork-source'));
  await page.waitForSelector(`${view}[data-session="f1"]`);
  page.assertClean();
});

test('a worktree session from the form: Commit…, the file tree, a preview, the search, the session\'s changes', { timeout: 30_000 }, async () => {
  const repo = makeRepo('repo-wt');
  const page = await h.open({ room: 'ws3' });
  if (!(await page.$(tid('new-session-form')))) await page.click(tid('new-session'));
  await page.fill(tid('session-id-input'), 'wt1');
  await page.check(tid('worktree-toggle'));
  await page.fill(tid('worktree-repo'), repo);
  await page.click(tid('start-session'));
  await page.waitForSelector(`${view}[data-session="wt1"]`);
  const ws = tid('session-workspace', '[data-kind="worktree"]');
  await page.waitForSelector(ws);
  assert.equal(await page.getAttribute(ws, 'data-branch'), 'ensemble/ws3/wt1');
  assert.match(await page.textContent(ws), /on branch ensemble\/ws3\/wt1/);
  await send(page, '/write src/app.txt hi there');
  await page.waitForSelector(`${view} ${tid('turn-changes')} ${fileRow('src/app.txt')}`);

  // Commit…: a message, then the commit and its branch; git has it.
  await page.click(tid('commit-open'));
  await page.waitForSelector(tid('commit-dialog'));
  // The dialog takes the focus in an effect, a moment after it shows.
  await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'commit-message');
  await page.fill(tid('commit-message'), 'add the app');
  await page.click(tid('commit-submit'));
  await page.waitForSelector(tid('commit-result'));
  const log = git(repo, 'log', '--format=%h %s', 'ensemble/ws3/wt1');
  assert.match(log.split('\n')[0], / add the app$/);
  const short = log.split(' ')[0];
  assert.match(await page.textContent(tid('commit-result')), new RegExp(`Committed ${short.slice(0, 7)} on branch ensemble/ws3/wt1`));
  await page.waitForSelector(`${view} ${tid('workspace-committed', '[data-branch="ensemble/ws3/wt1"]')}`);
  assert.match(await page.textContent(tid('workspace-committed')), /add the app/);
  assert.equal(git(repo, 'show', 'ensemble/ws3/wt1:src/app.txt').trim(), 'hi there');
  // Again: nothing to commit, said in the dialog.
  await page.fill(tid('commit-message'), 'again');
  await page.click(tid('commit-submit'));
  await page.waitForSelector(tid('commit-error'));
  assert.match(await page.textContent(tid('commit-error')), /Nothing to commit/);
  await page.keyboard.press('Escape');
  await page.waitForSelector(tid('commit-dialog'), { state: 'detached' });

  // Files: a tree read per directory, a preview, a search.
  await page.click(tid('pane-files'));
  await page.waitForSelector(tid('file-dir', '[data-path="src"]'));
  assert.ok(await page.$(tid('file-entry', '[data-path="README.md"]')));
  assert.equal(await page.$(tid('file-entry', '[data-path="src/app.txt"]')), null, 'a directory is read when opened');
  await page.click(tid('file-dir', '[data-path="src"]'));
  await page.click(tid('file-entry', '[data-path="src/app.txt"]'));
  await page.waitForSelector(`${tid('file-preview', '[data-path="src/app.txt"]')} ${tid('file-preview-content')}`);
  assert.equal((await page.textContent(tid('file-preview-content'))).trim(), 'hi there');
  await page.fill(tid('file-search'), 'apptx');
  await page.click(tid('file-search-submit'));
  await page.waitForSelector(`${tid('file-search-results')} ${tid('file-match', '[data-path="src/app.txt"]')}`);
  await page.click(tid('file-entry', '[data-path="README.md"]'));
  await page.waitForSelector(tid('file-preview', '[data-path="README.md"]'));
  await page.click(tid('file-match', '[data-path="src/app.txt"]'));
  await page.waitForSelector(tid('file-preview', '[data-path="src/app.txt"]'));
  await shots(page, 'workspace-files');

  // The whole session's changes: base to the latest checkpoint.
  await page.click(tid('pane-changes'));
  await page.waitForSelector(`${tid('session-changes')} ${fileRow('src/app.txt', '[data-status="added"]')}`);
  await page.click(`${tid('session-changes')} ${fileRow('src/app.txt')} ${tid('changed-file-toggle')}`);
  await page.waitForSelector(`${tid('session-changes')} ${tid('changed-file-diff')} tr.d-add`);
  assert.match(await page.textContent(`${tid('session-changes')} ${tid('changed-file-diff')}`), /hi there/);
  await page.click(tid('pane-transcript'));
  await page.waitForSelector(`${view} ${tid('transcript')}`);
  // The only failed request: the second commit's 409 nothing_to_commit.
  page.assertClean([/status of 409/]);
});

test('the form\'s worktree errors are shown with their messages', { timeout: 30_000 }, async () => {
  const repo = makeRepo('repo-errors');
  const plain = join(h.server.workspace, 'not-a-repo');
  mkdirSync(plain, { recursive: true });
  const page = await h.open({ room: 'ws4' });
  const attempt = async (id, repoPath, branch) => {
    if (!(await page.$(tid('new-session-form')))) await page.click(tid('new-session'));
    await page.fill(tid('session-id-input'), id);
    await page.check(tid('worktree-toggle'));
    await page.fill(tid('worktree-repo'), repoPath);
    await page.fill(tid('worktree-branch'), branch ?? '');
    const before = await page.$$eval(tid('app-message'), (els) => els.length);
    await page.click(tid('start-session'));
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid="app-message"]').length > n || document.querySelectorAll('[data-testid="app-message"]').length === 4, before);
    return page.$$eval(tid('app-message'), (els) => els[els.length - 1].textContent);
  };
  assert.match(await attempt('e1', plain), /not_a_git_repo/);
  assert.match(await attempt('e2', repo, 'main'), /branch_exists/);
  assert.match(await attempt('e2', repo, 'main'), /main/);
  const outside = await attempt('e3', '/tmp');
  assert.match(outside, /cwd_outside_workspace/);
  assert.ok(outside.includes(h.server.workspace), `names the allowed roots: ${outside}`);
  assert.equal((await h.rest.sessions('ws4')).data.length, 0, 'no session was made');
  page.assertClean([/Failed to load resource/]);
});

test('restore while a turn runs: 409 turn_active is shown, nothing is restored', { timeout: 30_000 }, async () => {
  const repo = makeRepo('repo-busy');
  await h.rest.call('POST', '/v1/rooms/ws5/sessions', { sessionId: 'b1', cwd: repo }, 201);
  const page = await h.open({ room: 'ws5', session: 'b1' });
  await send(page, '/write kept.md stay');
  await page.waitForSelector(`${view} ${tid('turn-changes')} ${fileRow('kept.md')}`);
  await send(page, '/hang');
  await page.waitForSelector(`${view} ${tid('cancel')}`);
  await page.click(`${view} ${tid('restore-turn')}`);
  await page.click(tid('confirm-restore'));
  await page.waitForSelector(`${tid('app-message')}:has-text("turn_active")`);
  assert.match(await page.textContent(`${tid('app-message')}:has-text("turn_active")`), /restoring the workspace failed: .*\(409 turn_active\)/);
  assert.ok(existsSync(join(repo, 'kept.md')), 'nothing was restored');
  assert.equal(await page.$$eval(tid('workspace-restored'), (els) => els.length), 0);
  await page.click(`${view} ${tid('cancel')}`);
  await page.waitForSelector(`${view} ${tid('send')}`);
  page.assertClean([/status of 409/]);
});
