// Takes the README's screenshot of the console (docs/console.png, 1400×900): a scripted session with
// a reasoning step, a tool, a file change, a plan, a pending approval and a goal. Not a test; run it
// by hand after a visible change of the console, then shrink the PNG:
//
//   node readme-screenshot.mjs /tmp/console.png
//   pngquant --quality 70-90 --strip --force --output ../docs/console.png /tmp/console.png   (Debian: pngquant)
import { startServer } from './support/server.mjs';
import { launchBrowser } from './support/browser.mjs';
import { api } from './support/api.mjs';

const out = process.argv[2] ?? 'console.png';
const server = await startServer();
const browser = await launchBrowser();
try {
  const rest = api(server.baseUrl, server.token);
  await rest.call('POST', '/v1/rooms/webapp/sessions', { sessionId: 'docs', title: 'Write the docs' }, 201);
  await rest.call('POST', '/v1/rooms/api/sessions', { sessionId: 'bench', title: 'Benchmark the API' }, 201);
  await rest.call('POST', '/v1/rooms/webapp/sessions', { sessionId: 'fix', title: 'Fix the failing test' }, 201);
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.setDefaultTimeout(15_000);
  await page.goto(`${server.baseUrl}/#token=${server.token}&room=webapp&session=fix`);
  await page.waitForSelector('[data-testid="connection-status"][data-state="live"]');
  // The notifications offer is not what the picture is about.
  if (await page.$('[data-testid="notify-dismiss"]')) await page.click('[data-testid="notify-dismiss"]');
  await page.fill('[data-testid="goal-objective"]', 'all tests pass idle');
  await page.click('[data-testid="goal-set"]');
  await page.waitForSelector('[data-testid="goal-status"][data-status="active"]');
  await page.fill(
    '[data-testid="composer"]',
    [
      '/reason The failure is in **parse_header**: the test expects a trailing dot to be accepted.',
      '/tool grep -n parse_header src',
      '/edit src/header.rs pub fn parse_header(h: &str) -> &str {\\n    h.strip_suffix(\'.\').unwrap_or(h)\\n}',
      '/plan Reproduce the failure; Fix parse_header; Run the tests',
      'the test `header_trailing_dot` fails',
      '/run cargo test header',
    ].join('\n'),
  );
  await page.click('[data-testid="send"]');
  await page.waitForSelector('[data-testid="interaction"][data-state="pending"]');
  await page.fill('[data-testid="composer"]', 'Also check the **Host** header, please.');
  await page.evaluate(() => {
    const t = document.querySelector('[data-testid="transcript"]');
    t.scrollTop = t.scrollHeight;
  });
  await page.screenshot({ path: out });
  console.log(`wrote ${out}`);
} finally {
  await browser.close();
  await server.stop();
}
