// The first hour, as a new user met it (issue 56): a room the token cannot open says so at once and
// is not retried, a typed room id is checked as it is typed, and the page never scrolls — only its
// panes do — however long a diff, at the desktop and phone sizes.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { send, tid, useConsole } from '../support/console.mjs';

const h = useConsole();
const view = tid('session-view');

/** A repository with one commit on `main`, in the server's workspace root. */
function makeRepo(name) {
  const dir = join(h.server.workspace, name);
  mkdirSync(dir, { recursive: true });
  const git = (...args) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
      cwd: dir,
      env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
    });
  git('init', '-q', '-b', 'main');
  writeFileSync(join(dir, 'README.md'), '# readme\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'init');
  return dir;
}

test('a room the token cannot open says why at once and is not retried; a typed id is checked', { timeout: 60_000 }, async () => {
  await h.rest.call('POST', '/v1/rooms/work/sessions', { sessionId: 'w1', title: 'Work' }, 201);
  const viewer = (await h.rest.call('POST', '/v1/tokens', { name: 'door-viewer', role: 'viewer', rooms: ['work'], ttlSecs: 3600 }, 201)).json;
  const page = await h.open({ token: viewer.secret });
  const sockets = [];
  page.on('websocket', (ws) => sockets.push(ws.url()));
  await page.waitForSelector(tid('room-item', '[data-room="work"]'));

  // An id that is not one is refused as it is typed, and cannot be opened.
  await page.fill(tid('room-input'), 'my room!');
  await page.waitForSelector(tid('room-input-problem'));
  assert.match(await page.textContent(tid('room-input-problem')), /letters, digits/);
  assert.equal(await page.getAttribute(tid('room-input'), 'aria-invalid'), 'true');
  assert.ok(await page.$eval(tid('open-room'), (b) => b.disabled), 'Open is disabled for an invalid id');
  await page.fill(tid('room-input'), 'demo');
  await page.waitForSelector(tid('room-input-problem'), { state: 'detached' });
  assert.equal(await page.$eval(tid('open-room'), (b) => b.disabled), false);

  // A room outside the token's rooms: said at once, not "connecting…" forever.
  await page.click(tid('open-room'));
  await page.waitForSelector(tid('room-unavailable'), { timeout: 8_000 });
  assert.match(await page.textContent(tid('room-unavailable')), /no room "demo" for this token/);
  assert.equal(await page.getAttribute(tid('connection-status'), 'data-state'), 'unavailable');
  assert.match(await page.textContent(tid('connection-status')), /cannot open this room/);
  assert.equal(await page.$(tid('room-item', '[data-room="demo"]')), null, 'the room is not listed');
  const demoTries = () => sockets.filter((u) => u.includes('/v1/rooms/demo/ws')).length;
  const triedBefore = demoTries();
  assert.ok(triedBefore >= 1);

  // Another room opens meanwhile; the refused one was not tried again.
  await page.click(tid('room-item', '[data-room="work"]'));
  await page.waitForSelector(`${tid('connection-status')}[data-state="live"]`);
  await page.waitForSelector(tid('session-item', '[data-session="w1"]'));
  assert.equal(demoTries(), triedBefore, 'a refused room is not retried');
  assert.equal(await page.$(tid('app-message')), null, 'one message, where the room would be: no error bar besides');
  // Chromium logs the refused handshake and the REST 404s itself; nothing else may be reported.
  page.assertClean([/WebSocket connection to '.*\/v1\/rooms\/demo\/ws.*404/, /Failed to load resource: .* 404/]);
});

for (const viewport of ['desktop', 'phone']) {
  test(`the page does not scroll, its panes do, with a long diff open (${viewport})`, { timeout: 60_000 }, async () => {
    const repo = makeRepo(`long-diff-${viewport}`);
    const room = `long-${viewport}`;
    await h.rest.call('POST', `/v1/rooms/${room}/sessions`, { sessionId: 'l1', cwd: repo }, 201);
    const page = await h.open({ room, session: 'l1', viewport });
    await page.waitForSelector(view);
    const lines = Array.from({ length: 300 }, (_, i) => `line ${i + 1}`).join('\\n');
    await send(page, `/write big.txt ${lines}`);
    const block = `${view} ${tid('turn-changes')}`;
    const row = `${block} ${tid('changed-file', '[data-path="big.txt"]')}`;
    await page.waitForSelector(row);
    await page.click(`${row} ${tid('changed-file-toggle')}`);
    await page.waitForSelector(`${block} ${tid('changed-file-diff')} tr.d-add`);
    assert.equal(await page.$$eval(`${block} ${tid('changed-file-diff')} tr.d-add`, (rows) => rows.length), 300);

    const fit = await page.evaluate(() => ({
      page: document.scrollingElement.scrollHeight,
      view: window.innerHeight,
      wide: document.scrollingElement.scrollWidth,
      width: window.innerWidth,
    }));
    assert.ok(fit.page <= fit.view, `the document is ${fit.page} px tall in a ${fit.view} px viewport`);
    assert.ok(fit.wide <= fit.width, `the document is ${fit.wide} px wide in a ${fit.width} px viewport`);
    // The transcript scrolls by itself, and the header stays where it is.
    const scrolled = await page.$eval(`${view} ${tid('transcript')}`, (t) => {
      t.scrollTop = t.scrollHeight;
      return { top: t.scrollTop, room: t.scrollHeight - t.clientHeight };
    });
    assert.ok(scrolled.room > 0 && scrolled.top > 0, `the transcript scrolls: ${JSON.stringify(scrolled)}`);
    const header = await page.$eval('.top', (el) => el.getBoundingClientRect().top);
    assert.equal(header, 0, 'the header stays at the top');
    assert.ok(await page.isVisible(`${view} textarea`), 'the composer is on screen');
    page.assertClean();
  });
}

test('a fork shows the conversation it inherited, up to the fork point; a turn that changed nothing forks too', { timeout: 60_000 }, async () => {
  const repo = makeRepo('fork-history');
  await h.rest.call('POST', '/v1/rooms/forks/sessions', { sessionId: 'src', title: 'Source', cwd: repo }, 201);
  const page = await h.open({ room: 'forks', session: 'src' });
  await send(page, '/write a.txt one');
  await page.waitForSelector(`${view} ${tid('turn-changes')}`);
  await send(page, 'plain words, no file');
  await page.waitForSelector(`${view} ${tid('message')}:has-text("plain words, no file")`);
  const turns = await page.$$eval(`${view} ${tid('user-message')}`, (els) => els.map((e) => e.getAttribute('data-turn')));
  assert.equal(turns.length, 2);

  // Through the first turn, from its changes block: the fork opens with that turn, not the second.
  await page.click(`${view} ${tid('turn-changes')} ${tid('fork-turn')}`);
  await page.waitForSelector(`${view}:not([data-session="src"]) ${tid('inherited')}`);
  const inherited = `${view} ${tid('inherited')}`;
  assert.equal(await page.getAttribute(inherited, 'data-source'), 'src');
  assert.match(await page.textContent(inherited), /Inherited from Source, through turn 1/);
  assert.deepEqual(await page.$$eval(`${inherited} ${tid('user-message')}`, (els) => els.map((e) => e.getAttribute('data-turn'))), [turns[0]]);
  assert.doesNotMatch(await page.textContent(inherited), /plain words, no file/);
  assert.ok(await page.$(`${inherited} ${tid('fork-point')}`));
  // Inherited items are read-only: no restore or fork of the source's turns from here.
  assert.equal(await page.$(`${inherited} ${tid('fork-turn')}`), null);

  // Through the second turn, which changed no file: it forks, and inherits both turns.
  const fork = (await h.rest.call('POST', '/v1/rooms/forks/sessions/src/fork', { atTurn: turns[1], sessionId: 'f2' }, 201)).json;
  assert.equal(fork.sessionId ?? fork.session?.sessionId ?? 'f2', 'f2');
  await page.click(tid('session-item', '[data-session="f2"]'));
  await page.waitForSelector(`${view}[data-session="f2"] ${tid('inherited')}`);
  assert.deepEqual(await page.$$eval(`${view}[data-session="f2"] ${tid('inherited')} ${tid('user-message')}`, (els) => els.map((e) => e.getAttribute('data-turn'))), turns);
  page.assertClean();
});

test('New session opens in the main pane, Start in view without scrolling (1400×900)', { timeout: 60_000 }, async () => {
  await h.rest.call('POST', '/v1/rooms/starts/sessions', { sessionId: 'first', title: 'First' }, 201);
  const page = await h.open({ room: 'starts', session: 'first' });
  await page.click(tid('new-session'));
  const form = `main ${tid('new-session-form')}`;
  await page.waitForSelector(form);
  assert.equal(await page.$(`nav ${tid('new-session-form')}`), null, 'not squeezed into the sidebar');
  const start = await page.$(`${form} ${tid('start-session')}`);
  const box = await start.boundingBox();
  const viewport = page.viewportSize();
  assert.ok(box && box.y >= 0 && box.y + box.height <= viewport.height, `Start session is in view: ${JSON.stringify(box)} in ${JSON.stringify(viewport)}`);
  assert.equal(await page.evaluate(() => document.querySelector('main .main-form').scrollTop), 0);
  await page.fill(`${form} ${tid('title-input')}`, 'Second');
  await start.click();
  await page.waitForSelector(`${tid('session-item')}:has-text("Second")`);
  await page.waitForSelector(form, { state: 'detached' });
  await page.waitForSelector(`${view} h2:has-text("Second")`);
  page.assertClean();
});

test('closing offers to remove the worktree; worktrees left behind are listed and removed', { timeout: 60_000 }, async () => {
  const { existsSync } = await import('node:fs');
  const repo = makeRepo('keep-or-purge');
  const worktree = async (sessionId) => {
    await h.rest.call('POST', '/v1/rooms/trees/sessions', { sessionId, workspace: { kind: 'worktree', repo } }, 201);
    return (await h.rest.call('GET', `/v1/rooms/trees/sessions/${sessionId}/workspace`, undefined, 200)).json.workspace.path;
  };
  const purged = await worktree('purged');
  const kept = await worktree('kept');
  assert.ok(existsSync(purged) && existsSync(kept));
  const page = await h.open({ room: 'trees', session: 'purged' });

  // Close and remove its worktree.
  const purging = (id) => page.waitForResponse((r) => r.request().method() === 'DELETE' && r.url().includes(`/sessions/${id}?purge=true`));
  await page.click(`${view} ${tid('close-session')}`);
  const first = purging('purged');
  await page.click(tid('confirm-close-purge'));
  assert.equal((await first).status(), 204);
  await page.waitForSelector(`${view} ${tid('session-closed')}`);
  assert.ok(!existsSync(purged), 'the worktree is removed');

  // Closed alone: its worktree stays, and is listed as left behind, with a way to remove it.
  await page.click(tid('session-item', '[data-session="kept"]'));
  await page.click(`${view}[data-session="kept"] ${tid('close-session')}`);
  await page.click(tid('confirm-close'));
  const item = tid('left-behind-item', '[data-session="kept"]');
  await page.waitForSelector(item);
  assert.ok(existsSync(kept), 'closing alone keeps the worktree');
  assert.equal(await page.$(tid('left-behind-item', '[data-session="purged"]')), null);
  const second = purging('kept');
  await page.click(`${item} ${tid('remove-worktree')}`);
  assert.equal((await second).status(), 204);
  await page.waitForSelector(item, { state: 'detached' });
  assert.ok(!existsSync(kept), 'Remove deletes it');
  page.assertClean();
});

test('an untitled session is named by its first words and renamed; counts say open and closed; a viewer is not asked', { timeout: 60_000 }, async () => {
  await h.rest.call('POST', '/v1/rooms/names/sessions', { sessionId: 'n1' }, 201);
  await h.rest.call('POST', '/v1/rooms/names/sessions', { sessionId: 'n2' }, 201);
  const page = await h.open({ room: 'names', session: 'n1' });
  await send(page, 'fix the login bug\nwith the details after');
  await page.waitForSelector(`${view} h2:has-text("fix the login bug")`);
  assert.match(await page.textContent(tid('session-item', '[data-session="n1"]')), /fix the login bug/);
  assert.doesNotMatch(await page.textContent(tid('session-item', '[data-session="n1"]')), /with the details/);
  // Renamed in place.
  await page.click(`${view} ${tid('rename-session')}`);
  await page.fill(tid('rename-input'), 'Login fix');
  await page.click(tid('rename-save'));
  await page.waitForSelector(`${view} h2:has-text("Login fix")`);
  assert.equal((await h.rest.call('GET', '/v1/rooms/names/sessions/n1', undefined, 200)).json.title, 'Login fix');

  // The room counts open sessions, and closed ones apart.
  await h.rest.call('DELETE', '/v1/rooms/names/sessions/n2', undefined, 204);
  await page.waitForSelector(tid('room-item', '[data-room="names"][data-count="1"]'));
  assert.match(await page.textContent(tid('room-item', '[data-room="names"]')), /1 open · 1 closed/);

  // A viewer sees who the waiting session waits for, and its tab counts nothing it cannot answer.
  const viewer = (await h.rest.call('POST', '/v1/tokens', { name: 'names-viewer', role: 'viewer', rooms: ['names'], ttlSecs: 3600 }, 201)).json;
  const watching = await h.open({ room: 'names', session: 'n1', token: viewer.secret });
  await send(page, '/run make');
  await page.waitForSelector(`${view} ${tid('status-badge', '[data-status="waiting"]')}`);
  assert.match(await page.textContent(`${view} ${tid('status-badge')}`), /waiting for you/);
  await watching.waitForSelector(`${view} ${tid('status-badge', '[data-status="waiting"]')}`);
  assert.match(await watching.textContent(`${view} ${tid('status-badge')}`), /waiting for an approver/);
  assert.match(await page.title(), /^\(1\)/, 'the admin is asked');
  assert.doesNotMatch(await watching.title(), /^\(\d+\)/, 'the viewer is not');
  page.assertClean();
  watching.assertClean();
});

test('a / in the composer lists the agent\'s commands; arrows and Enter pick one', { timeout: 30_000 }, async () => {
  await h.rest.call('POST', '/v1/rooms/slash/sessions', { sessionId: 'c1' }, 201);
  const page = await h.open({ room: 'slash', session: 'c1' });
  const box = `${view} ${tid('composer')}`;
  await page.fill(box, '/');
  await page.waitForSelector(tid('command-option', '[data-command="run"]'));
  assert.ok((await page.$$(tid('command-option'))).length > 3, 'the scripted agent has several');
  await page.type(box, 'ed');
  await page.waitForFunction(() => [...document.querySelectorAll('[data-testid="command-option"]')].map((o) => o.dataset.command).join() === 'edit');
  assert.match(await page.textContent(tid('command-option')), /\/edit PATH \[TEXT\] — append/);
  await page.press(box, 'Enter');
  await page.waitForSelector(tid('command-menu'), { state: 'detached' });
  assert.equal(await page.inputValue(box), '/edit ');
  // Escape closes it; a word after the name is no command to pick.
  await page.fill(box, '/h');
  await page.waitForSelector(tid('command-menu'));
  await page.press(box, 'ArrowDown');
  assert.equal(await page.getAttribute(`${tid('command-option')}[aria-selected="true"]`, 'data-command'), 'hang');
  await page.press(box, 'Escape');
  await page.waitForSelector(tid('command-menu'), { state: 'detached' });
  await page.fill(box, '/history now');
  assert.equal(await page.$(tid('command-menu')), null);
  page.assertClean();
});
