// Access control in the console: Share… (admin) makes a token with a role, rooms and an expiry and
// shows its console URL with a QR code drawn in the page, once; the link opens a page that shows its
// role and hides what that role may not do (a viewer: no composer, no New session, no answer or
// workspace buttons; an operator: everything but the answers), while the room streams; Revoke… in
// the token list closes the viewer's socket with 4003, said so and not retried; an approver answers
// an approval and the admin's page says who did; what an operator does (a turn, a commit, a restore,
// a close) reads "by NAME" on the admin's page.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { send, sessionStatus, shots, tid, unnamed, useConsole } from '../support/console.mjs';

const h = useConsole();
const view = tid('session-view');
const here = dirname(fileURLToPath(import.meta.url));

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

/** A token made over REST with the admin token: `{token, secret}`. */
async function makeToken(name, role, rooms) {
  return (await h.rest.call('POST', '/v1/tokens', { name, role, rooms, ttlSecs: 3600 }, 201)).json;
}

/** The dark modules the console's QR library gives for `text`, when its node_modules are there. */
function expectedModules(text) {
  const lib = resolve(here, '..', '..', 'console', 'node_modules', 'qrcode-generator');
  if (!existsSync(lib)) return null;
  const qrcode = createRequire(import.meta.url)(lib);
  const qr = qrcode(0, 'M');
  qr.addData(text, 'Byte');
  qr.make();
  const n = qr.getModuleCount();
  const dark = [];
  for (let r = 0; r < n; r++) for (let c = 0; c < n; c++) if (qr.isDark(r, c)) dark.push(`${c + 4},${r + 4}`);
  return { n, dark };
}

const absent = async (page, selector) => assert.equal(await page.$(selector), null, `${selector} should not be on the page`);

test('Share…: a viewer link with its QR code; the viewer watches read-only; Revoke… stops it (4003)', { timeout: 60_000 }, async () => {
  const repo = makeRepo('share-repo');
  await h.rest.call('POST', '/v1/rooms/share/sessions', { sessionId: 's1', title: 'Shared work', workspace: { kind: 'worktree', repo } }, 201);
  const admin = await h.open({ room: 'share', session: 's1' });
  await admin.waitForSelector(tid('whoami', '[data-role="admin"]'));
  assert.match(await admin.textContent(tid('whoami')), /admin · admin/);

  // The dialog, with its defaults.
  await admin.click(tid('share-open'));
  await admin.waitForSelector(`${tid('share-dialog')}[open]`);
  assert.equal(await admin.inputValue(tid('share-name')), 'shared device');
  assert.equal(await admin.inputValue(tid('share-role')), 'viewer');
  assert.deepEqual(await admin.$$eval(`${tid('share-role')} option`, (os) => os.map((o) => o.value)), ['viewer', 'operator', 'approver']);
  assert.equal(await admin.isChecked(tid('share-room-this')), true);
  assert.equal(await admin.isChecked(tid('share-room-all')), false);
  assert.equal(await admin.inputValue(tid('share-expiry-select')), '7d');
  assert.deepEqual(await admin.$$eval(`${tid('share-expiry-select')} option`, (os) => os.map((o) => o.textContent)), ['1 hour', '1 day', '7 days', '30 days', 'never']);
  assert.deepEqual(await unnamed(admin), [], 'the Share dialog\'s form');
  await admin.fill(tid('share-name'), 'tablet');
  const before = Date.now();
  await admin.click(tid('share-create'));

  // The link: this page's origin, the console's fragment keys, the secret percent-encoded.
  await admin.waitForSelector(tid('share-result'));
  const url = await admin.inputValue(tid('share-url'));
  const m = new RegExp(`^${h.server.baseUrl.replace(/[.]/g, '\\.')}/#token=([^&]+)&room=share$`).exec(url);
  assert.ok(m, `the link: ${url}`);
  const secret = decodeURIComponent(m[1]);
  assert.match(secret, /^ens_/);
  const me = (await h.rest.call('GET', '/v1/me', undefined, 200, { headers: { authorization: `Bearer ${secret}` } })).json;
  assert.equal(me.name, 'tablet');
  assert.equal(me.role, 'viewer');
  assert.deepEqual(me.rooms, ['share']);
  const week = 7 * 86_400_000;
  assert.ok(me.expiresAtMs >= before + week - 60_000 && me.expiresAtMs <= Date.now() + week + 60_000, `expires in 7 days: ${me.expiresAtMs}`);
  assert.match(await admin.textContent(tid('share-expiry')), /^expires in 7 days \(.+\)$/);
  assert.match(await admin.textContent(tid('share-once')), /shown only this once/);
  assert.match(await admin.textContent(tid('share-result')), /tablet.*viewer, room share/);

  // The QR code: drawn in the page, one square per dark module, those of the link.
  const qr = await admin.$eval(tid('share-qr'), (svg) => ({
    tag: svg.tagName.toLowerCase(),
    viewBox: svg.getAttribute('viewBox'),
    modules: Number(svg.getAttribute('data-modules')),
    d: svg.querySelector('path')?.getAttribute('d') ?? '',
    width: svg.getBoundingClientRect().width,
    label: svg.getAttribute('aria-label'),
  }));
  assert.equal(qr.tag, 'svg');
  const squares = [...qr.d.matchAll(/M(\d+) (\d+)h1v1h-1z/g)].map((x) => `${x[1]},${x[2]}`);
  assert.ok(squares.length > 200, `a QR code of a ${url.length}-character URL has hundreds of dark modules: ${squares.length}`);
  assert.equal(squares.length, qr.modules);
  const side = Number(qr.viewBox.split(' ')[2]);
  assert.ok(side >= 21 + 8 && (side - 8 - 17) % 4 === 0, `a QR symbol's side (4n+17) plus the quiet zone: ${qr.viewBox}`);
  assert.ok(qr.width >= 150, `big enough to scan: ${qr.width}px`);
  assert.match(qr.label, /QR code/);
  const expected = expectedModules(url);
  if (expected) {
    assert.equal(side, expected.n + 8);
    assert.deepEqual(squares, expected.dark, 'the QR code encodes exactly the link');
  }
  // The copy button writes the link.
  await admin.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.server.baseUrl });
  await admin.click(tid('share-copy'));
  await admin.waitForSelector(tid('share-copy', '[data-state="copied"]'));
  assert.equal(await admin.evaluate(() => navigator.clipboard.readText()), url);
  assert.deepEqual(await unnamed(admin), [], 'the Share dialog with a new link');
  // The token list has it.
  const row = tid('token-row', '[data-name="tablet"]');
  await admin.waitForSelector(`${row}[data-active="true"]`);
  assert.match(await admin.textContent(row), /tablet\s*viewer\s*room share/);
  assert.match(await admin.textContent(`${row} ${tid('token-state')}`), /^expires in 7 days$/);
  assert.match(await admin.textContent(`${row} ${tid('token-last-use')}`), /^(never used|last used just now)$/);
  await shots(admin, 'access-share');

  // Another one, for every room and never expiring.
  await admin.click(tid('share-another'));
  await admin.fill(tid('share-name'), 'wall screen');
  await admin.selectOption(tid('share-role'), 'operator');
  await admin.check(tid('share-room-all'));
  await admin.selectOption(tid('share-expiry-select'), 'never');
  await admin.click(tid('share-create'));
  await admin.waitForSelector(tid('share-result'));
  assert.equal(await admin.textContent(tid('share-expiry')), 'never expires');
  const listed = (await h.rest.call('GET', '/v1/tokens', undefined, 200)).json.data.find((t) => t.name === 'wall screen');
  assert.deepEqual([listed.role, listed.rooms, listed.expiresAtMs ?? null], ['operator', ['*'], null]);

  // Escape closes the dialog; the focus is back on Share….
  await admin.keyboard.press('Escape');
  await admin.waitForSelector(tid('share-dialog'), { state: 'detached' });
  assert.equal(await admin.evaluate(() => document.activeElement?.getAttribute('data-testid')), 'share-open');

  // The link opens a viewer's page: its role in the header, nothing it may not do.
  const viewer = await h.open({ url });
  await viewer.waitForSelector(tid('whoami', '[data-role="viewer"]'));
  assert.equal((await viewer.textContent(tid('whoami'))).replace('Signed in as ', ''), 'viewer · tablet');
  assert.ok(!(await viewer.evaluate(() => location.href)).includes('ens_'), 'the secret left the address bar');
  await viewer.click(tid('session-item', '[data-session="s1"]'));
  await viewer.waitForSelector(`${view}[data-session="s1"]`);
  await viewer.waitForSelector(tid('read-only'));
  for (const id of ['composer', 'new-session', 'new-session-form', 'share-open', 'close-session', 'commit-open', 'release', 'open-side', 'goal-set', 'goal-objective']) {
    await absent(viewer, tid(id));
  }
  // On the admin's page, the same session has them.
  for (const id of ['composer', 'new-session', 'share-open', 'close-session', 'commit-open']) assert.ok(await admin.$(tid(id)), `the admin has ${id}`);

  // The room streams to the viewer: a turn and an approval started over REST by the admin.
  await h.rest.startTurn('share', 's1', '/write notes.md hi\n/chunks 20');
  await viewer.waitForSelector(`${view} ${tid('message')}[data-done="true"]`);
  assert.equal(await viewer.textContent(`${view} ${tid('user-message')} ${tid('turn-actor')}`), 'admin', 'the turn names who sent it');
  await viewer.waitForSelector(`${view} ${tid('turn-changes')} ${tid('changed-file', '[data-path="notes.md"]')}`);
  await absent(viewer, `${view} ${tid('restore-turn')}`);
  await absent(viewer, `${view} ${tid('fork-turn')}`);
  await admin.waitForSelector(`${view} ${tid('turn-changes')} ${tid('restore-turn')}`);
  await sessionStatus(viewer, 's1', 'ready');
  await h.rest.startTurn('share', 's1', '/run make check');
  const pending = `${view} ${tid('interaction')}[data-state="pending"]`;
  await viewer.waitForSelector(pending);
  await viewer.waitForSelector(`${pending} ${tid('interaction-waiting')}`);
  assert.match(await viewer.textContent(`${pending} ${tid('interaction-waiting')}`), /waiting for someone who may answer/i);
  assert.equal(await viewer.$$eval(`${pending} [data-testid^="decision-"], ${pending} [data-testid^="agent-option-"], ${pending} ${tid('answer-input')}`, (els) => els.length), 0, 'no answer buttons');
  await admin.waitForSelector(`${pending} ${tid('decision-accept')}`);
  await shots(viewer, 'access-viewer');
  assert.deepEqual(await unnamed(viewer), [], 'the viewer\'s page');
  await admin.click(`${pending} ${tid('decision-accept')}`);
  await viewer.waitForSelector(`${view} ${tid('interaction-resolution')}:text-is("accepted by admin")`);
  await sessionStatus(viewer, 's1', 'ready');

  // Revoke… from the admin's token list: asked first (Escape keeps it, and the dialog), then done.
  const sockets = [];
  viewer.on('websocket', (ws) => sockets.push(ws));
  await admin.click(tid('share-open'));
  await admin.waitForSelector(`${row}[data-active="true"] ${tid('token-revoke')}`);
  await admin.click(`${row} ${tid('token-revoke')}`);
  await admin.waitForSelector(tid('confirm-revoke-dialog'));
  assert.equal(await admin.evaluate(() => document.activeElement?.getAttribute('data-testid')), 'keep-token');
  await admin.keyboard.press('Escape');
  await admin.waitForSelector(tid('confirm-revoke-dialog'), { state: 'detached' });
  assert.ok(await admin.$(`${tid('share-dialog')}[open]`), 'Escape on the question keeps the dialog open');
  assert.equal((await h.rest.call('GET', '/v1/me', undefined, 200, { headers: { authorization: `Bearer ${secret}` } })).json.name, 'tablet', 'not revoked yet');
  await admin.click(`${row} ${tid('token-revoke')}`);
  await admin.click(tid('confirm-revoke'));
  await admin.waitForSelector(`${row}[data-active="false"]`);
  assert.match(await admin.textContent(`${row} ${tid('token-state')}`), /^revoked just now$/);
  await absent(admin, `${row} ${tid('token-revoke')}`);

  // The viewer's page is told at once (its socket closed with 4003) and does not try again.
  const problem = tid('token-problem');
  await viewer.waitForSelector(problem, { timeout: 5_000 });
  assert.match(await viewer.textContent(problem), /this token was revoked or has expired/i);
  await viewer.waitForSelector(tid('connection-status', '[data-state="revoked"]'));
  assert.match(await viewer.textContent(tid('whoami')), /token revoked/);
  assert.equal((await h.rest.call('GET', '/v1/me', undefined, undefined, { headers: { authorization: `Bearer ${secret}` } })).status, 401);
  // The room goes on (a turn, seen on the admin's page): the viewer opens no new socket and sees none of it.
  await h.rest.startTurn('share', 's1', 'after the revocation');
  await admin.waitForSelector(`${view} ${tid('message')}[data-done="true"]:has-text("after the revocation")`);
  assert.equal(sockets.length, 0, `the viewer reconnected ${sockets.length} time(s) after 4003`);
  assert.equal(await viewer.$(`${view} ${tid('message')}:has-text("after the revocation")`), null);
  await shots(viewer, 'access-revoked');
  admin.assertClean();
  viewer.assertClean();
});

test('an approver answers an approval; the admin\'s page says who did', { timeout: 30_000 }, async () => {
  await h.rest.call('POST', '/v1/rooms/appr/sessions', { sessionId: 'a1' }, 201);
  const { secret } = await makeToken('release manager', 'approver', ['appr']);
  const admin = await h.open({ room: 'appr', session: 'a1' });
  const approver = await h.open({ room: 'appr', session: 'a1', token: secret });
  await approver.waitForSelector(tid('whoami', '[data-role="approver"]'));
  assert.match(await approver.textContent(tid('whoami')), /approver · release manager/);
  // An approver may act (composer) and answer, but not share.
  assert.ok(await approver.$(tid('composer')));
  await absent(approver, tid('share-open'));

  await h.rest.startTurn('appr', 'a1', '/run make deploy');
  const pending = `${view} ${tid('interaction')}[data-state="pending"]`;
  await approver.waitForSelector(`${pending} ${tid('decision-accept')}`);
  await absent(approver, `${pending} ${tid('interaction-waiting')}`);
  await approver.click(`${pending} ${tid('decision-decline')}`);
  const resolution = `${view} ${tid('interaction-resolution')}`;
  await admin.waitForSelector(`${resolution}[data-actor="release manager"]`);
  assert.equal(await admin.textContent(resolution), 'declined by release manager');
  await approver.waitForSelector(`${resolution}:text-is("declined by release manager")`);
  const resolved = (await h.rest.events('appr')).data.find((e) => e.type === 'interaction.resolved');
  assert.equal(resolved.actor?.name, 'release manager');
  assert.equal(resolved.payload.decision, 'decline');
  await sessionStatus(admin, 'a1', 'ready');
  assert.equal(await admin.$$eval(`${view} ${tid('call')}`, (els) => els.length), 0, 'the declined command did not run');
  admin.assertClean();
  approver.assertClean();
});

test('an operator acts but does not answer; its turn, commit, restore and close read "by" its name', { timeout: 45_000 }, async () => {
  const repo = makeRepo('ops-repo');
  await h.rest.call('POST', '/v1/rooms/ops/sessions', { sessionId: 'o1', workspace: { kind: 'worktree', repo } }, 201);
  const { secret } = await makeToken('ops', 'operator', ['ops']);
  const admin = await h.open({ room: 'ops', session: 'o1' });
  const operator = await h.open({ room: 'ops', session: 'o1', token: secret });
  await operator.waitForSelector(tid('whoami', '[data-role="operator"]'));
  assert.match(await operator.textContent(tid('whoami')), /operator · ops/);
  for (const id of ['composer', 'new-session', 'close-session', 'commit-open']) assert.ok(await operator.$(tid(id)), `the operator has ${id}`);
  await absent(operator, tid('share-open'));

  // An approval: the operator sees it, with no buttons; the admin answers it.
  await send(operator, '/run make lint');
  const pending = `${view} ${tid('interaction')}[data-state="pending"]`;
  await operator.waitForSelector(`${pending} ${tid('interaction-waiting')}`);
  assert.equal(await operator.$$eval(`${pending} [data-testid^="decision-"]`, (els) => els.length), 0, 'no answer buttons');
  await shots(operator, 'access-operator');
  // The turn was the operator's: the admin's page names it.
  await admin.waitForSelector(`${view} ${tid('user-message')} ${tid('turn-actor')}:text-is("ops")`);
  await admin.click(`${pending} ${tid('decision-accept')}`);
  await operator.waitForSelector(`${view} ${tid('interaction-resolution')}:text-is("accepted by admin")`);
  await sessionStatus(operator, 'o1', 'ready');

  // A commit, then a restore, both by the operator.
  await send(operator, '/write a.md one');
  await operator.waitForSelector(`${view} ${tid('turn-changes')} ${tid('changed-file', '[data-path="a.md"]')}`);
  await operator.click(tid('commit-open'));
  await operator.fill(tid('commit-message'), 'add a');
  await operator.click(tid('commit-submit'));
  await operator.waitForSelector(tid('commit-result'));
  await operator.click(tid('commit-cancel'));
  const committed = `${view} ${tid('workspace-committed')}`;
  await admin.waitForSelector(`${committed}[data-actor="ops"]`);
  assert.match(await admin.textContent(committed), /^Committed [0-9a-f]{7,} on ensemble\/ops\/o1 by ops: add a$/);
  await sessionStatus(operator, 'o1', 'ready');
  await send(operator, '/write b.md two');
  const second = `${view} ${tid('turn-changes')}:has(${tid('changed-file', '[data-path="b.md"]')})`;
  await operator.waitForSelector(second);
  await operator.click(`${second} ${tid('restore-turn')}`);
  await operator.click(tid('confirm-restore'));
  const restored = `${view} ${tid('workspace-restored')}`;
  await admin.waitForSelector(`${restored}[data-actor="ops"]`);
  assert.match(await admin.textContent(restored), /^Files restored to checkpoint \S+ by ops/);

  // Closed by the operator: the admin's page says by whom.
  await operator.click(tid('close-session'));
  await operator.click(tid('confirm-close'));
  await admin.waitForSelector(tid('session-closed'));
  assert.equal(await admin.textContent(tid('session-closed')), 'This session is closed by ops.');
  assert.ok(
    (await admin.$$eval(`${view} ${tid('info')}`, (els) => els.map((e) => e.textContent))).some((t) => /^Session ended by ops \(/.test(t)),
    'the transcript\'s end line names who closed it',
  );
  const events = (await h.rest.events('ops')).data;
  assert.equal(events.find((e) => e.type === 'workspace.committed')?.actor?.name, 'ops');
  assert.equal(events.find((e) => e.type === 'workspace.restored')?.actor?.name, 'ops');
  assert.equal(events.find((e) => e.type === 'session.completed')?.actor?.name, 'ops');
  admin.assertClean();
  operator.assertClean();
});
