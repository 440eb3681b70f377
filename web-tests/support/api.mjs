// Tiny REST client for the ensemble contract (/work/shared/API.md), used from Node.
import assert from 'node:assert/strict';

export function api(baseUrl) {
  async function call(method, path, body, expectStatus) {
    const res = await fetch(baseUrl + path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    const json = text ? JSON.parse(text) : null;
    if (expectStatus !== undefined) {
      assert.equal(res.status, expectStatus, `${method} ${path} -> ${res.status} ${text}`);
    }
    return { status: res.status, json };
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
