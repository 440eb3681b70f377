// Debian's Chromium (never a Playwright-downloaded browser) driven by playwright-core, plus static
// page servers on other loopback ports so that the probe page has a real http://127.0.0.1:PORT origin
// (one the ensemble server trusts via --trusted-origins, and optionally one it does not).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { chromium } from 'playwright-core';
import { startServer } from './server.mjs';

const here = dirname(fileURLToPath(import.meta.url));

/** $CHROMIUM_PATH, else Debian's /usr/bin/chromium. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** A name Chromium resolves to 127.0.0.1 (see CHROMIUM_ARGS): a DNS-rebinding attacker's host. */
export const REBIND_HOST = 'rebind.test';

// Without the background-networking flags Chromium tries outside connections that this machine refuses.
// --host-resolver-rules makes REBIND_HOST resolve to 127.0.0.1 (the port is kept), as a rebinding
// attacker's DNS would; no other name is affected. --no-proxy-server: never route that name to a proxy.
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  `--host-resolver-rules=MAP ${REBIND_HOST} 127.0.0.1`,
  '--no-proxy-server',
];

export async function launchBrowser() {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS, timeout: 20_000 });
}

/** Serves support/page.html at /index.html on 127.0.0.1:0. */
export async function startPageServer() {
  const html = readFileSync(join(here, 'page.html'));
  const server = createServer((req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    if (req.method === 'GET' && (path === '/' || path === '/index.html')) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(html);
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    // The token (if any) goes in the fragment: the page server never sees it.
    url: (params, token) =>
      `http://127.0.0.1:${port}/index.html?${new URLSearchParams(params)}` +
      (token ? `#token=${encodeURIComponent(token)}` : ''),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * One server + page server(s) + browser for a test file. The probe's page server is started first so
 * that its origin can be passed to the ensemble server as `--trusted-origins`. With `untrusted: true` a
 * second page server (`h.untrusted`) serves the same probe from an origin the server does NOT trust.
 * `openPage(room, {after, origin: 'trusted'|'untrusted', token})` opens a fresh page (own context) on
 * the probe, with the server's address and the room in its query string and the token (default: the
 * server's; `null` for none) in its fragment.
 */
export async function setupHarness(startServer, { serverOptions = {}, untrusted = false } = {}) {
  const pages = await startPageServer();
  const others = untrusted ? await startPageServer() : null;
  const closePages = async () => {
    await pages.close();
    await others?.close();
  };
  let server;
  try {
    server = await startServer({ ...serverOptions, trustedOrigins: [pages.origin, ...(serverOptions.trustedOrigins ?? [])] });
  } catch (e) {
    await closePages();
    throw e;
  }
  let browser;
  try {
    browser = await launchBrowser();
  } catch (e) {
    await closePages();
    await server.stop();
    throw e;
  }
  const contexts = [];
  const newPage = async () => {
    const context = await browser.newContext();
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    const consoleErrors = [];
    page.on('pageerror', (e) => consoleErrors.push(String(e)));
    page.consoleErrors = consoleErrors;
    return page;
  };
  return {
    server,
    pages,
    untrusted: others,
    browser,
    newPage,
    async openPage(room, { after, origin = 'trusted', token = server.token } = {}) {
      const from = origin === 'untrusted' ? others : pages;
      if (!from) throw new Error('setupHarness({untrusted: true}) is needed for an untrusted page');
      const page = await newPage();
      const params = { server: server.addr, room };
      if (after !== undefined) params.after = String(after);
      await page.goto(from.url(params, token));
      return page;
    },
    async close() {
      for (const c of contexts) await c.close().catch(() => {});
      await browser?.close().catch(() => {});
      await closePages();
      return server.stop();
    },
  };
}

/**
 * One server and browser per test file: registers the `before`/`after` hooks and returns the harness
 * object, filled in once `before` has run (then `onReady(h)` is called). The server must stop cleanly.
 */
export function useHarness({ onReady, ...options } = {}) {
  const h = {};
  // `onReady` runs inside the same hook: a second `before` of the test file would not wait for it.
  before(async () => {
    Object.assign(h, await setupHarness(startServer, options));
    onReady?.(h);
  });
  after(async () => {
    const res = await h.close?.();
    if (res) assert.ok(res.code === 0 || res.signal === 'SIGTERM', `server stopped uncleanly: ${JSON.stringify(res)}`);
  });
  return h;
}
