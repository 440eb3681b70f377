// A browser-initiated close completes the RFC 6455 closing handshake (the server echoes Close).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useHarness } from '../support/browser.mjs';

const h = useHarness();

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
