// Access control as a browser meets it: cross-site WebSocket hijacking and CSRF from an untrusted
// origin, DNS rebinding (a foreign Host that resolves to 127.0.0.1), and the WebSocket bearer token.
// Every refusal is also checked on the server's side (its request counter by route and status), so a
// request the browser never sent cannot pass for one the server refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { api, waitFor } from '../support/api.mjs';
import { REBIND_HOST, useHarness } from '../support/browser.mjs';
import { randomToken } from '../support/server.mjs';

const WS_ROUTE = '/v1/rooms/{roomId}/ws';
const SESSIONS_ROUTE = '/v1/rooms/{roomId}/sessions';

let rest;
const h = useHarness({
  untrusted: true,
  onReady: (harness) => {
    rest = api(harness.server.baseUrl, harness.server.token);
  },
});

/** Runs `action`, then waits until the server has counted `n` more requests with these labels. */
async function expectCounted(labels, n, action) {
  const before = await rest.requestCount(labels);
  const result = await action();
  await waitFor(async () => (await rest.requestCount(labels)) === before + n, {
    what: `${n} more ${JSON.stringify(labels)} requests (had ${before})`,
  });
  // Nothing more arrives later.
  assert.equal(await rest.requestCount(labels), before + n);
  return result;
}

/** Waits until the probe's connection `label` has opened or closed; returns its state and frames. */
async function settle(page, label) {
  await page.waitForFunction((l) => window.conns[l].closed || window.conns[l].open, label);
  return page.evaluate((l) => {
    const { ws, url, ...c } = window.conns[l];
    return { ...c, frames: window.framesOf(l) };
  }, label);
}

function assertRefused(conn, what) {
  assert.equal(conn.opened, false, `${what}: the socket opened`);
  assert.equal(conn.error, true, `${what}: no error event`);
  assert.equal(conn.closed, true, `${what}: not closed`);
  assert.equal(conn.closeCode, 1006, `${what}: close code`);
  assert.deepEqual(conn.frames, [], `${what}: frames received`);
}

test('cross-site WebSocket hijacking: an untrusted origin with the token is refused, the trusted one is not', { timeout: 30_000 }, async () => {
  const room = 'sec-cswsh';
  await rest.createSession(room, 's1');
  const evil = await h.openPage(room, { origin: 'untrusted' });
  assert.equal(await evil.evaluate(() => window.token), h.server.token, 'the attacker page knows the token');

  const refused = await expectCounted({ route: WS_ROUTE, method: 'GET', status: 403 }, 1, async () => {
    await evil.evaluate(() => window.connect('evil', 0));
    return settle(evil, 'evil');
  });
  assertRefused(refused, 'untrusted origin');

  // The same request from Node with the attacker's Origin and the token: refused for the Origin alone.
  const headers = { origin: h.untrusted.origin, 'sec-websocket-protocol': `ensemble.v1, ensemble.bearer.${h.server.token}` };
  const replay = await rest.call('GET', `/v1/rooms/${room}/ws`, undefined, 403, { headers });
  assert.equal(replay.json.error.code, 'origin_not_allowed');

  // The trusted page, same token, same room: hello and the room's session.
  const good = await h.openPage(room);
  await good.evaluate(() => window.connect('good', 0));
  await good.waitForFunction(() => window.framesOf('good').some((f) => f.type === 'hello'));
  const ok = await settle(good, 'good');
  assert.equal(ok.opened, true);
  assert.equal(ok.protocol, 'ensemble.v1');
  assert.equal(ok.frames[0].type, 'hello');
  assert.deepEqual(ok.frames[0].sessions.map((s) => s.sessionId), ['s1']);
  // And the attacker's socket never received anything meanwhile.
  assert.deepEqual(await evil.evaluate(() => window.framesOf('evil')), []);
});

test('CSRF: cross-origin POSTs from an untrusted page create no session', { timeout: 30_000 }, async () => {
  const room = 'sec-csrf';
  const evil = await h.openPage(room, { origin: 'untrusted' });
  const target = `${h.server.baseUrl}/v1/rooms/${room}/sessions`;

  // A "simple" request (text/plain body, no preflight), as a hidden form or no-cors fetch sends it.
  // The browser does send it (the server counts it) and the server refuses it.
  const simple = await expectCounted({ route: SESSIONS_ROUTE, method: 'POST', status: 403 }, 1, () =>
    evil.evaluate(async (url) => {
      const res = await fetch(url, {
        method: 'POST',
        mode: 'no-cors',
        headers: { 'content-type': 'text/plain' },
        body: JSON.stringify({ sessionId: 'csrf' }),
      });
      return res.type;
    }, target),
  );
  assert.equal(simple, 'opaque');

  // With the token in an Authorization header the browser must ask first (preflight OPTIONS); the
  // server refuses the preflight, so the POST itself is never sent.
  const postsBefore = await rest.requestCount({ route: SESSIONS_ROUTE, method: 'POST' });
  const preflighted = await expectCounted({ route: SESSIONS_ROUTE, method: 'OPTIONS', status: 403 }, 1, () =>
    evil.evaluate(
      async ([url, token]) => {
        try {
          await fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
            body: JSON.stringify({ sessionId: 'csrf2' }),
          });
          return 'sent';
        } catch (e) {
          return e.name;
        }
      },
      [target, h.server.token],
    ),
  );
  assert.equal(preflighted, 'TypeError');
  assert.equal(await rest.requestCount({ route: SESSIONS_ROUTE, method: 'POST' }), postsBefore);

  // Checked from Node: no session, no room.
  assert.deepEqual((await rest.sessions(room)).data, []);
  assert.ok(!(await rest.rooms()).data.some((r) => r.roomId === room));

  // The Origin alone decides: a valid token and JSON body with the attacker's Origin is still 403, with
  // the trusted page's Origin it is created.
  const body = { sessionId: 'direct' };
  const foreign = await rest.call('POST', `/v1/rooms/${room}/sessions`, body, 403, { headers: { origin: h.untrusted.origin } });
  assert.equal(foreign.json.error.code, 'origin_not_allowed');
  await rest.call('POST', `/v1/rooms/${room}/sessions`, body, 201, { headers: { origin: h.pages.origin } });
  assert.deepEqual((await rest.sessions(room)).data.map((s) => s.sessionId), ['direct']);

  // The trusted page itself may use REST with the token: its preflight is answered with CORS headers
  // (it carries no token), then the real request goes through.
  const good = await h.openPage(room);
  const created = await good.evaluate(
    async ([url, token]) => {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ sessionId: 'from-trusted-page' }),
      });
      return { status: res.status, body: await res.json() };
    },
    [target, h.server.token],
  );
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal(created.body.sessionId, 'from-trusted-page');
});

test('DNS rebinding: a page on a foreign host name that resolves to 127.0.0.1 gets 403 host_not_allowed', { timeout: 30_000 }, async () => {
  const room = 'sec-rebind';
  await rest.createSession(room, 's1');
  const base = `http://${REBIND_HOST}:${h.server.port}`;
  const page = await h.newPage();

  // The name does reach this server: the public probe answers.
  const health = await page.goto(`${base}/healthz`);
  assert.equal(health.status(), 200);
  assert.deepEqual(await health.json(), { status: 'ok' });

  const paths = { '/': '/', '/v1/rooms': '/v1/rooms', [`/v1/rooms/${room}/events`]: '/v1/rooms/{roomId}/events' };
  for (const [path, route] of Object.entries(paths)) {
    const res = await expectCounted({ route, method: 'GET', status: 403 }, 1, () => page.goto(`${base}${path}`));
    assert.equal(res.status(), 403, path);
    assert.equal((await res.json()).error.code, 'host_not_allowed', path);
  }

  // The attacker's page, now same-origin with the server as far as the browser knows: reads, writes
  // and the WebSocket are all refused, even with the token.
  await page.goto(`${base}/healthz`);
  const seen = await page.evaluate(
    async ([room, token]) => {
      const auth = { authorization: `Bearer ${token}` };
      const get = await fetch('/v1/rooms', { headers: auth });
      const post = await fetch(`/v1/rooms/${room}/sessions`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ sessionId: 'rebound' }),
      });
      const ws = await new Promise((resolve) => {
        const s = new WebSocket(`ws://${location.host}/v1/rooms/${room}/ws?after=0`, ['ensemble.v1', `ensemble.bearer.${token}`]);
        const frames = [];
        s.onmessage = (ev) => frames.push(ev.data);
        s.onclose = (ev) => resolve({ code: ev.code, frames });
      });
      return { get: [get.status, (await get.json()).error.code], post: [post.status, (await post.json()).error.code], ws };
    },
    [room, h.server.token],
  );
  assert.deepEqual(seen, {
    get: [403, 'host_not_allowed'],
    post: [403, 'host_not_allowed'],
    ws: { code: 1006, frames: [] },
  });
  assert.deepEqual((await rest.sessions(room)).data.map((s) => s.sessionId), ['s1']);

  // Control: under the loopback name the same server serves the page.
  const home = await page.goto(`http://127.0.0.1:${h.server.port}/`);
  assert.equal(home.status(), 200);
});

test('room WebSocket from the trusted page: no token, a wrong token and a bearer entry alone fail, the right token beside ensemble.v1 succeeds', { timeout: 30_000 }, async () => {
  const room = 'sec-ws-token';
  const page = await h.openPage(room);
  const unauthorized = { route: WS_ROUTE, method: 'GET', status: 401 };

  const none = await expectCounted(unauthorized, 1, async () => {
    await page.evaluate(() => window.connect('none', 0, { protocols: [] }));
    return settle(page, 'none');
  });
  assertRefused(none, 'no token');

  const wrong = await expectCounted(unauthorized, 1, async () => {
    await page.evaluate((t) => window.connect('wrong', 0, { protocols: ['ensemble.v1', `ensemble.bearer.${t}`] }), randomToken());
    return settle(page, 'wrong');
  });
  assertRefused(wrong, 'wrong token');

  // The right token, offered beside ensemble.v1: the server picks ensemble.v1 (the token is not echoed).
  await page.evaluate(() => window.connect('right', 0));
  await page.waitForFunction(() => window.framesOf('right').length >= 1);
  const right = await settle(page, 'right');
  assert.equal(right.opened, true);
  assert.equal(right.protocol, 'ensemble.v1');
  assert.equal(right.frames[0].type, 'hello');
  assert.equal(right.frames[0].roomId, room);

  // The bearer entry alone is refused (400 app_protocol_required): the only protocol the server could
  // answer would be that entry, which would echo the token.
  const bearerOnly = `ensemble.bearer.${h.server.token}`;
  const alone = await expectCounted({ route: WS_ROUTE, method: 'GET', status: 400 }, 1, async () => {
    await page.evaluate((p) => window.connect('bearer-only', 0, { protocols: [p] }), bearerOnly);
    return settle(page, 'bearer-only');
  });
  assertRefused(alone, 'bearer entry without ensemble.v1');
});
