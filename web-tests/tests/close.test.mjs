// A browser-initiated close completes the RFC 6455 closing handshake (the server echoes Close).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setupHarness } from '../support/browser.mjs';
import { startServer } from '../support/server.mjs';

let h;
before(async () => {
  h = await setupHarness(startServer);
});
after(async () => {
  const res = await h?.close();
  if (res) assert.ok(res.code === 0 || res.signal === 'SIGTERM', `server stopped uncleanly: ${JSON.stringify(res)}`);
});

test(
  'closing the socket from the browser is a clean close (1000, wasClean)',
  { timeout: 30_000 },
  async () => {
    const page = await h.openPage('web-close', { after: 0 });
    await page.waitForFunction(() => window.conns.c1.open && window.framesOf('c1').length >= 1);
    const res = await page.evaluate(() => window.disconnect('c1'));
    assert.deepEqual(res, { code: 1000, wasClean: true });
  },
);
