// The console (GET /, built from console/ into server/src/console/) in a real browser: one server and
// one Chromium per test file, pages opened on the console URL with the token in the fragment, at the
// two viewport sizes the console is made for, and screenshots of each screen at both sizes under
// web-tests/artifacts/ (git-ignored).
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before } from 'node:test';
import { api } from './api.mjs';
import { launchBrowser } from './browser.mjs';
import { startServer } from './server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
export const ARTIFACTS = resolve(here, '..', 'artifacts');

export const VIEWPORTS = {
  desktop: { width: 1400, height: 900 },
  phone: { width: 390, height: 844 },
};

/** `[data-testid=…]`, optionally with more attribute selectors: tid('session-item', '[data-session="s1"]'). */
export const tid = (id, more = '') => `[data-testid="${id}"]${more}`;

/**
 * Registers before/after hooks for one server (scripted provider; `serverOptions` as startServer's)
 * and one browser; returns `h`, filled in by `before`: `server`, `rest` (REST from Node), `open()`.
 */
export function useConsole({ serverOptions = {} } = {}) {
  const h = { contexts: [] };
  before(async () => {
    h.server = await startServer(serverOptions);
    try {
      h.browser = await launchBrowser();
    } catch (e) {
      await h.server.stop();
      throw e;
    }
    h.rest = api(h.server.baseUrl, h.server.token);
  });
  after(async () => {
    for (const c of h.contexts) await c.close().catch(() => {});
    await h.browser?.close().catch(() => {});
    const res = await h.server?.stop();
    if (res) assert.ok(res.code === 0 || res.signal === 'SIGTERM', `server stopped uncleanly: ${JSON.stringify(res)}`);
  });

  /**
   * Opens the console in a fresh browser context: `#token=…` plus `room`/`session` in the fragment as
   * the console keeps them. Script errors and console errors (a CSP violation is one) are collected in
   * `page.problems`; `page.assertClean()` fails on any. With a room, waits until its stream is live.
   */
  h.open = async ({ room, session, viewport = 'desktop', token = h.server.token, context, url } = {}) => {
    const ctx = context ?? (await h.browser.newContext({ viewport: VIEWPORTS[viewport] }));
    if (!context) h.contexts.push(ctx);
    const page = await ctx.newPage();
    page.setDefaultTimeout(15_000);
    watchProblems(page);
    const frag = new URLSearchParams();
    if (token) frag.set('token', token);
    if (room) frag.set('room', room);
    if (session) frag.set('session', session);
    // `url`: exactly that address (e.g. a link the console made), waiting for live when it names a room.
    await page.goto(url ?? `${h.server.baseUrl}/#${frag}`);
    if (room || (url && /[#&]room=/.test(url))) await live(page);
    return page;
  };
  return h;
}

/** Controls in Chromium's accessibility tree without a name, as `role (backend node N)` strings. */
export async function unnamed(page) {
  const cdp = await page.context().newCDPSession(page);
  const { nodes } = await cdp.send('Accessibility.getFullAXTree');
  await cdp.detach();
  const roles = new Set(['button', 'textbox', 'combobox', 'checkbox', 'link', 'listbox', 'radio', 'menuitem', 'tab', 'searchbox', 'spinbutton']);
  return nodes
    .filter((n) => !n.ignored && roles.has(n.role?.value) && !String(n.name?.value ?? '').trim())
    .map((n) => `${n.role.value} (backend node ${n.backendDOMNodeId})`);
}

/** Collects page errors and console errors into `page.problems`. */
export function watchProblems(page) {
  page.problems = [];
  page.on('pageerror', (e) => page.problems.push(`pageerror: ${e}`));
  page.on('console', (m) => {
    if (m.type() === 'error') page.problems.push(`console: ${m.text()}`);
  });
  page.assertClean = (allow = []) => {
    const left = page.problems.filter((p) => !allow.some((re) => re.test(p)));
    assert.deepEqual(left, [], 'the page reported errors');
  };
  return page;
}

/** Waits until the open room's stream says live. */
export function live(page) {
  return page.waitForSelector(tid('connection-status', '[data-state="live"]'));
}

/** Saves `artifacts/<name>-desktop.png` and `artifacts/<name>-phone.png`, then restores the viewport. */
export async function shots(page, name) {
  mkdirSync(ARTIFACTS, { recursive: true });
  const was = page.viewportSize();
  for (const [label, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    // One frame for the layout to settle at the new size.
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    await page.screenshot({ path: join(ARTIFACTS, `${name}-${label}.png`) });
  }
  if (was) await page.setViewportSize(was);
}

/** Types `text` into the open session's composer and sends it with the Send button. */
export async function send(page, text, { within = '[data-testid="session-view"]' } = {}) {
  await page.fill(`${within} ${tid('composer')}`, text);
  await page.click(`${within} ${tid('send')}`);
  await page.waitForFunction((sel) => document.querySelector(sel)?.value === '', `${within} ${tid('composer')}`);
}

/** The session-view's transcript texts of one item kind (data-testid). */
export function texts(page, id, within = '[data-testid="session-view"]') {
  return page.$$eval(`${within} ${tid(id)}`, (els) => els.map((e) => e.textContent));
}

/** Waits until the session `sessionId`'s badge in the session list shows `status`. */
export function sessionStatus(page, sessionId, status) {
  return page.waitForSelector(tid("session-item", `[data-session="${sessionId}"][data-status="${status}"]`), { state: "attached" });
}

/** Starts a session through the "new session" form (scripted, the default provider). */
export async function startSession(page, sessionId, fields = {}) {
  if (!(await page.$(tid('new-session-form')))) await page.click(tid('new-session'));
  await page.fill(tid('session-id-input'), sessionId);
  for (const [id, value] of Object.entries(fields)) {
    const el = await page.$(tid(id));
    if ((await el.evaluate((e) => e.tagName)) === 'SELECT') await el.selectOption(value);
    else await el.fill(value);
  }
  await page.click(tid('start-session'));
  await page.waitForSelector(tid('session-view', `[data-session="${sessionId}"]`));
}
