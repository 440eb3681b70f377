// Tiny REST client for the ensemble contract (/work/shared/API.md), used from Node.
import assert from 'node:assert/strict';

// Every call carries `Authorization: Bearer <token>` (when a token is given); `opts.headers` adds or
// overrides headers for one call (`{authorization: undefined}` sends none).
export function api(baseUrl, token) {
  async function call(method, path, body, expectStatus, opts = {}) {
    const headers = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    Object.assign(headers, opts.headers);
    for (const k of Object.keys(headers)) if (headers[k] === undefined) delete headers[k];
    const res = await fetch(baseUrl + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    let json = null;
    if (text && /json/.test(res.headers.get('content-type') || '')) json = JSON.parse(text);
    if (expectStatus !== undefined) {
      assert.equal(res.status, expectStatus, `${method} ${path} -> ${res.status} ${text}`);
    }
    return { status: res.status, json, text, headers: res.headers };
  }
  const room = (r) => `/v1/rooms/${encodeURIComponent(r)}`;
  const sess = (r, s) => `${room(r)}/sessions/${encodeURIComponent(s)}`;
  return {
    call,
    createSession: async (r, sessionId) => (await call('POST', `${room(r)}/sessions`, { sessionId }, 201)).json,
    startTurn: async (r, s, text) =>
      (await call('POST', `${sess(r, s)}/turns`, { input: [{ type: 'text', text }] }, 202)).json,
    answer: async (r, s, requestId, body) =>
      (await call('POST', `${sess(r, s)}/interactions/${encodeURIComponent(requestId)}`, body, 200)).json,
    interactions: async (r, s) => (await call('GET', `${sess(r, s)}/interactions`, undefined, 200)).json,
    events: async (r, after = 0, limit = 1000) =>
      (await call('GET', `${room(r)}/events?after=${after}&limit=${limit}`, undefined, 200)).json,
    sessions: async (r) => (await call('GET', `${room(r)}/sessions`, undefined, 200)).json,
    rooms: async () => (await call('GET', '/v1/rooms', undefined, 200)).json,
    /** Sum of `ensemble_http_requests_total` samples whose labels include all of `labels`. */
    requestCount: async (labels) => {
      const { text } = await call('GET', '/metrics', undefined, 200);
      let n = 0;
      for (const line of text.split('\n')) {
        // Greedy: route labels contain braces (`/v1/rooms/{roomId}`).
        const m = /^ensemble_http_requests_total\{(.*)\} (\S+)$/.exec(line);
        if (!m) continue;
        const have = Object.fromEntries([...m[1].matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
        if (Object.entries(labels).every(([k, v]) => have[k] === String(v))) n += Number(m[2]);
      }
      return n;
    },
  };
}

/** Poll `fn` until it returns a truthy value (returned), or throw after `timeoutMs`. */
export async function waitFor(fn, { timeoutMs = 10_000, intervalMs = 20, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Asserts that `events` have seq from..(from+n-1), consecutive, no gaps, no repeats. */
export function assertConsecutive(events, from, msg = '') {
  const seqs = events.map((e) => e.seq);
  const expected = seqs.map((_, i) => from + i);
  assert.deepEqual(seqs, expected, `seq not gap-free/consecutive from ${from} ${msg}`);
}
