// "Open a session" in headless Chromium, for server/benches/open_session: the console opened at
// a room and session (`#token=…&room=…&session=…`), timed from navigation to the moment the
// session's last turn — its reply `lastText` — is on screen, with the bytes the server sent for it
// (HTTP response bodies and headers, and WebSocket frames, as Chromium received them) until then.
//
//   node bench/open-session.mjs BASE_URL TOKEN ROOM SESSION LAST_TEXT [RUNS]
//
// Prints one JSON line per run: {"ms": …, "bytes": …}. Each run is a fresh browser context (no
// cache), in one browser.
import { launchBrowser } from '../support/browser.mjs';

const [baseUrl, token, room, session, lastText, runsArg] = process.argv.slice(2);
if (!lastText) {
  console.error('usage: open-session.mjs BASE_URL TOKEN ROOM SESSION LAST_TEXT [RUNS]');
  process.exit(2);
}
const runs = Number(runsArg || 3);
const browser = await launchBrowser();
try {
  for (let i = 0; i < runs; i++) {
    const ctx = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await ctx.newPage();
    let bytes = 0;
    const cdp = await ctx.newCDPSession(page);
    await cdp.send('Network.enable');
    // Encoded bytes of every response (headers and body) as they reach the browser.
    cdp.on('Network.loadingFinished', (e) => (bytes += e.encodedDataLength));
    cdp.on('Network.webSocketFrameReceived', (e) => (bytes += Buffer.byteLength(e.response.payloadData)));
    const frag = new URLSearchParams({ token, room, session });
    const t0 = performance.now();
    await page.goto(`${baseUrl}/#${frag}`);
    await page.getByText(lastText, { exact: true }).first().waitFor({ state: 'visible', timeout: 120_000 });
    const ms = performance.now() - t0;
    console.log(JSON.stringify({ ms, bytes }));
    await ctx.close();
  }
} finally {
  await browser.close();
}
