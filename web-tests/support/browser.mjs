// Debian's Chromium (never a Playwright-downloaded browser) driven by playwright-core, plus a static
// page server on a second loopback port so that the probe page has a real http://127.0.0.1 origin.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));

/** $CHROMIUM_PATH, else Debian's /usr/bin/chromium. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

// Without the background-networking flags Chromium tries outside connections that this machine refuses.
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
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
    url: (params) => `http://127.0.0.1:${port}/index.html?${new URLSearchParams(params)}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * One server + page server + browser for a test file. `openPage(room, {after})` opens a fresh page
 * (own context) on the probe, with the server's address and the room in its query string.
 */
export async function setupHarness(startServer) {
  const server = await startServer();
  const pages = await startPageServer();
  let browser;
  try {
    browser = await launchBrowser();
  } catch (e) {
    await pages.close();
    await server.stop();
    throw e;
  }
  const contexts = [];
  return {
    server,
    pages,
    browser,
    async openPage(room, { after } = {}) {
      const context = await browser.newContext();
      contexts.push(context);
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      const consoleErrors = [];
      page.on('pageerror', (e) => consoleErrors.push(String(e)));
      const params = { server: server.addr, room };
      if (after !== undefined) params.after = String(after);
      await page.goto(pages.url(params));
      page.consoleErrors = consoleErrors;
      return page;
    },
    async close() {
      for (const c of contexts) await c.close().catch(() => {});
      await browser?.close().catch(() => {});
      await pages.close();
      return server.stop();
    },
  };
}
