// Accessible and responsive: every control has an accessible name (Chromium's own accessibility
// tree), a whole session can be driven from the keyboard alone, and the console is usable at
// 1400×900 and 390×844 (no sideways scrolling, the rooms behind a menu button on a phone, the composer
// on screen).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { send, sessionStatus, shots, startSession, tid, unnamed, useConsole } from '../support/console.mjs';

const h = useConsole();
const view = tid('session-view');

/** Presses Tab until the element matching `selector` has focus (at most `max` times). */
async function tabTo(page, selector, max = 40) {
  for (let i = 0; i < max; i++) {
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
    await page.keyboard.press('Tab');
  }
  assert.fail(`${selector} is not reachable with Tab (focus is on ${await page.evaluate(() => document.activeElement?.outerHTML.slice(0, 120))})`);
}

test('keyboard only: open a room, start a session, send, answer an approval', { timeout: 30_000 }, async () => {
  const page = await h.open();
  await tabTo(page, tid('room-input'));
  await page.keyboard.type('keys');
  await page.keyboard.press('Enter');
  await page.waitForSelector(tid('connection-status', '[data-state="live"]'));
  // The form opens by itself in an empty room; its controls come in order.
  await page.waitForSelector(tid('new-session-form'));
  await tabTo(page, tid('provider-select'));
  await tabTo(page, tid('session-id-input'));
  await page.keyboard.type('k1');
  // Tab skips a disabled button: it is enabled once the providers are listed (`GET /v1/providers`
  // may wait for an agent's login check).
  await page.waitForSelector(`${tid('start-session')}:enabled`);
  await tabTo(page, tid('start-session'));
  await page.keyboard.press('Enter');
  await page.waitForSelector(`${view}[data-session="k1"]`);
  await tabTo(page, tid('composer'));
  await page.keyboard.type('/run echo check');
  await page.keyboard.press('Control+Enter');
  await page.waitForSelector(`${view} ${tid('interaction')}[data-state="pending"]`);
  await tabTo(page, tid('decision-accept'));
  await page.keyboard.press('Enter');
  await page.waitForSelector(`${view} ${tid('call')}[data-status="completed"]`);
  await sessionStatus(page, 'k1', 'ready');
  // The transcript itself can take focus (to scroll it with the keyboard).
  await tabTo(page, tid('transcript'));
  page.assertClean();
});

test('every control is labelled, on every screen', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'labels' });
  assert.deepEqual(await unnamed(page), [], 'the new-session form');
  await startSession(page, 's1');
  await send(page, '/edit a.txt hello\n/plan one; two\n/ask Which one?');
  await page.waitForSelector(`${view} ${tid('interaction')}[data-state="pending"]`);
  await page.waitForSelector(`${tid('open-side')}:not([disabled])`);
  await page.click(tid('open-side'));
  await page.waitForSelector(tid('side-panel'));
  assert.deepEqual(await unnamed(page), [], 'a session with a diff, a plan, a question and a side conversation');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.click('.nav-toggle');
  assert.deepEqual(await unnamed(page), [], 'the phone layout with the menu open');
  page.assertClean();
});

test('every control of the workspace panes is labelled', { timeout: 30_000 }, async () => {
  // A git repository in the server's workspace root: its session is checkpointed.
  const repo = join(h.server.workspace, 'a11y-repo');
  mkdirSync(repo, { recursive: true });
  const git = (...args) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
      cwd: repo,
      env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
    });
  git('init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'README.md'), '# readme\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'init');
  await h.rest.call('POST', '/v1/rooms/a11y-ws/sessions', { sessionId: 'w', cwd: repo }, 201);
  const page = await h.open({ room: 'a11y-ws', session: 'w' });
  await send(page, '/write notes.md hello');
  await page.waitForSelector(`${view} ${tid('turn-changes')}`);
  await page.click(tid('changed-file-toggle'));
  await page.waitForSelector(tid('changed-file-diff'));
  assert.deepEqual(await unnamed(page), [], 'a turn\'s changes with a diff open');
  await page.click(tid('pane-changes'));
  await page.waitForSelector(tid('session-changes'));
  assert.deepEqual(await unnamed(page), [], 'the session\'s changes');
  await page.click(tid('pane-files'));
  await page.waitForSelector(tid('file-entry'));
  assert.deepEqual(await unnamed(page), [], 'the files pane');
  page.assertClean();
});

test('usable at 1400×900 and 390×844', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'sizes' });
  await startSession(page, 's1', { 'title-input': 'Responsive' });
  await send(page, '/tool cargo test\n/edit src/a_rather_long_file_name_that_might_overflow_a_narrow_screen.rs fn main() { let a_really_long_identifier_that_does_not_wrap_easily = 1; }\nSome words to fill the line');
  await page.waitForSelector(`${view} ${tid('message')}[data-done="true"]`);
  const noSideways = async () => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
  const inViewport = (selector) =>
    page.$eval(selector, (e) => {
      const r = e.getBoundingClientRect();
      return r.width > 0 && r.left >= 0 && r.right <= window.innerWidth && r.top >= 0 && r.bottom <= window.innerHeight;
    });

  // Wide: rooms, the session and the goal panel side by side, nothing scrolls but the transcript.
  assert.ok(await noSideways());
  const box = async (sel) => page.$eval(sel, (e) => e.getBoundingClientRect().toJSON());
  const [nav, main, aside] = [await box('#nav'), await box('#main'), await box('.aside')];
  assert.ok(nav.right <= main.left + 1 && main.right <= aside.left + 1, JSON.stringify({ nav, main, aside }));
  assert.ok(await inViewport(tid('composer')));
  assert.ok(await inViewport(tid('session-list')));
  assert.ok(await inViewport(tid('goal-panel')));

  // Narrow: one column, the rooms behind the menu button; the composer stays on screen.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForFunction(() => getComputedStyle(document.getElementById('nav')).display === 'none');
  assert.ok(await noSideways(), 'the page scrolls sideways at 390 px');
  assert.ok(await inViewport(tid('composer')));
  assert.ok(await inViewport('.nav-toggle'));
  await page.click('.nav-toggle');
  assert.equal(await page.getAttribute('.nav-toggle', 'aria-expanded'), 'true');
  await page.waitForSelector(tid('room-item', '[data-room="sizes"]'));
  await shots(page, '12-phone-menu');
  await page.click(tid('session-item', '[data-session="s1"]'));
  await page.waitForFunction(() => getComputedStyle(document.getElementById('nav')).display === 'none');
  assert.ok(await noSideways());
  // The composer works at this size too.
  await send(page, 'from a phone');
  await page.waitForSelector(`${view} ${tid('message')}:has-text("You said: from a phone")`);
  assert.ok(await noSideways());
  await shots(page, '13-session');
  page.assertClean();
});
