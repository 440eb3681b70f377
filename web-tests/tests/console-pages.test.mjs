// The pages that were curl recipes (issue 56): providers with their availability and isolation,
// tokens made and revoked, the audit trail filtered, webhooks made (secret once), tested with
// their deliveries, paused and deleted, a room's export downloaded; each page follows the role.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { tid, useConsole } from '../support/console.mjs';
import { api, waitFor } from '../support/api.mjs';

const h = useConsole({ serverOptions: { extraArgs: ['--webhook-allow-private'] } });

test('an admin reads the providers, makes and revokes a token, reads the audit trail', { timeout: 60_000 }, async () => {
  await h.rest.call('POST', '/v1/rooms/pages/sessions', { sessionId: 'p1' }, 201);
  const page = await h.open({ room: 'pages' });
  page.on('dialog', (d) => d.accept());

  await page.click(tid('open-page-providers'));
  await page.waitForSelector(tid('provider-row', '[data-provider="scripted"][data-available="true"]'));

  await page.click(tid('open-page-tokens'));
  await page.fill(tid('token-name'), 'pages-phone');
  await page.selectOption(tid('token-role'), 'viewer');
  await page.fill(tid('token-rooms'), 'pages');
  await page.click(tid('token-create'));
  await page.waitForSelector(tid('token-made'));
  const secret = await page.textContent(tid('token-secret'));
  assert.match(secret, /^ens_/);
  assert.match(await page.getAttribute(tid('token-url'), 'href'), new RegExp(`#token=${secret}&room=pages$`));
  const row = tid('token-row', '[data-name="pages-phone"]');
  await page.waitForSelector(row);
  assert.equal((await api(h.server.baseUrl, secret).call('GET', '/v1/me', undefined, 200)).json.name, 'pages-phone');
  await page.click(`${row} ${tid('token-revoke')}`);
  await page.waitForSelector(`${row} ${tid('token-state')}:has-text("revoked")`);

  // The audit trail is written in batches: the page reads what is durable when it opens.
  await waitFor(async () => (await h.rest.call('GET', '/v1/audit?limit=1000', undefined, 200)).json.data.some((r) => r.method === 'DELETE' && r.route === '/v1/tokens/{tokenId}'), { what: 'the revocation in the audit trail' });
  await page.click(tid('open-page-audit'));
  await page.waitForSelector(tid('audit-row'));
  await page.fill(tid('audit-route'), 'DELETE /v1/tokens');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="audit-row"]').length === 1);
  assert.match(await page.textContent(tid('audit-row')), /DELETE \/v1\/tokens\/\{tokenId\}.*200/);
  await page.fill(tid('audit-token'), 'nobody-at-all');
  await page.waitForSelector(tid('audit-row'), { state: 'detached' });

  // A room's export, downloaded.
  await page.click(tid('page-close'));
  const download = page.waitForEvent('download');
  await page.click(tid('export-room'));
  const file = await (await download).path();
  const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.ok(lines.some((l) => JSON.stringify(l).includes('session.started')), 'the export has the room log');
  page.assertClean();
});

test('webhooks: made with the secret once, a test delivered with its attempts, paused, deleted', { timeout: 60_000 }, async () => {
  const got = [];
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      got.push({ headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  try {
    const url = `http://127.0.0.1:${receiver.address().port}/hook`;
    const page = await h.open();
    page.on('dialog', (d) => d.accept());
    await page.click(tid('open-page-webhooks'));
    await page.fill(tid('webhook-url'), url);
    await page.click(tid('webhook-create'));
    await page.waitForSelector(tid('webhook-secret'));
    const row = tid('webhook-row');
    await page.waitForSelector(`${row}[data-enabled="true"]`);
    await page.click(`${row} ${tid('webhook-test')}`);
    await page.waitForSelector(`${tid('delivery-row')}[data-state="delivered"]`, { timeout: 15_000 });
    assert.match(await page.textContent(tid('delivery-row')), /1 attempt: 204/);
    assert.equal(got.length, 1);
    assert.match(got[0].headers['ensemble-signature'] ?? '', /^v1=/);
    await page.click(`${row} ${tid('webhook-toggle')}`);
    await page.waitForSelector(`${row}[data-enabled="false"]`);
    await page.click(`${row} ${tid('webhook-delete')}`);
    await page.waitForSelector(row, { state: 'detached' });
    page.assertClean();
  } finally {
    receiver.close();
  }
});

test('a viewer sees the providers page only', { timeout: 30_000 }, async () => {
  const viewer = (await h.rest.call('POST', '/v1/tokens', { name: 'pages-viewer', role: 'viewer', rooms: ['pages'], ttlSecs: 3600 }, 201)).json;
  const page = await h.open({ token: viewer.secret });
  await page.waitForSelector(tid('open-page-providers'));
  for (const p of ['tokens', 'audit', 'webhooks']) assert.equal(await page.$(tid(`open-page-${p}`)), null, p);
  page.assertClean();
});
