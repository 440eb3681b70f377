// The console's pages beside the rooms, each what was a curl recipe: the providers (availability,
// login, isolation), the tokens (list, make, revoke), the audit trail (by token, room, route) and
// the webhooks (make with the secret shown once, deliveries with their attempts, a test, pause,
// delete). Each follows the token's role: a page or button the role may not use is not shown.

import { useEffect, useState } from "preact/hooks";
import type { App } from "../app.js";
import type { Page } from "../core.js";
import type { Schemas } from "../../../openapi/clients/typescript/src/client.js";
import { call } from "../api.js";
import { showControls } from "../shown.js";
import { shareUrl } from "../access.js";

const when = (ms: number | null | undefined) => (ms ? new Date(ms).toLocaleString() : "—");

/** The pages this token may open, in the order the header lists them. */
export function pagesFor(app: App): { page: Page; label: string }[] {
  const all: { page: Page; label: string; need: "viewer" | "admin" }[] = [
    { page: "providers", label: "Providers", need: "viewer" },
    { page: "tokens", label: "Tokens", need: "admin" },
    { page: "audit", label: "Audit", need: "admin" },
    { page: "webhooks", label: "Webhooks", need: "admin" },
  ];
  return all.filter((p) => app.may(p.need));
}

export function PageView({ app, page }: { app: App; page: Page }) {
  return (
    <section class="main-form page" data-testid={`page-${page}`} aria-label={page}>
      <div class="row spread">
        <h2>{pagesFor(app).find((p) => p.page === page)?.label ?? page}</h2>
        <button type="button" data-testid="page-close" onClick={() => app.openPage(null)}>
          Close
        </button>
      </div>
      {page === "providers" ? <Providers app={app} /> : page === "tokens" ? <Tokens app={app} /> : page === "audit" ? <Audit app={app} /> : <Webhooks app={app} />}
    </section>
  );
}

function Providers({ app }: { app: App }) {
  return (
    <table class="grid" data-testid="providers-table">
      <thead>
        <tr>
          <th>Provider</th>
          <th>Available</th>
          <th>Login</th>
          <th>Isolation</th>
        </tr>
      </thead>
      <tbody>
        {app.providers.map((p) => (
          <tr key={p.id} data-testid="provider-row" data-provider={p.id} data-available={p.available ? "true" : "false"}>
            <td>
              {showControls(p.displayName)} <span class="dim">{p.id}</span>
              {p.default ? <span class="badge">default</span> : null}
            </td>
            <td>{p.available ? "yes" : <span class="warn">no: {showControls(p.unavailableReason ?? "unknown reason")}</span>}</td>
            <td>{p.authState === "auth_required" ? <span class="warn">needed{p.loginCommand ? <>: run <code>{showControls(p.loginCommand)}</code> where the server runs</> : ""}</span> : "—"}</td>
            <td>{p.isolation?.warning ? <span class="warn">off: {showControls(p.isolation.warning)}</span> : p.isolation ? `${p.isolation.mode}` : "—"}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Tokens({ app }: { app: App }) {
  const [list, setList] = useState<Schemas["TokenInfo"][]>([]);
  const [round, setRound] = useState(0);
  const [made, setMade] = useState<{ secret: string; url: string } | null>(null);
  const [name, setName] = useState("");
  const [role, setRole] = useState<Schemas["Role"]>("viewer");
  const [rooms, setRooms] = useState(app.selectedRoom ?? "*");
  const [ttl, setTtl] = useState("604800");
  useEffect(() => {
    void app.act("listing the tokens", () => call(app.api.GET("/v1/tokens"))).then((l) => l && setList(l.data));
  }, [round]);
  return (
    <>
      <form
        class="row"
        data-testid="token-form"
        onSubmit={async (e) => {
          e.preventDefault();
          const roomList = rooms.split(",").map((r) => r.trim()).filter(Boolean);
          const body: Schemas["CreateToken"] = { name: name.trim(), role, rooms: roomList, ...(ttl ? { ttlSecs: Number(ttl) } : {}) };
          const r = await app.act("making a token", () => call(app.api.POST("/v1/tokens", { body })));
          if (!r) return;
          setMade({ secret: r.secret, url: shareUrl(location.origin, r.secret, roomList.length === 1 && roomList[0] !== "*" ? roomList[0]! : null) });
          setName("");
          setRound((n) => n + 1);
        }}
      >
        <input aria-label="Token name" placeholder="name" value={name} required data-testid="token-name" onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)} />
        <select aria-label="Role" value={role} data-testid="token-role" onChange={(e) => setRole((e.currentTarget as HTMLSelectElement).value as Schemas["Role"])}>
          {(["viewer", "operator", "approver", "admin"] as const).map((r) => (
            <option value={r}>{r}</option>
          ))}
        </select>
        <input aria-label="Rooms (comma separated, * for every room)" value={rooms} data-testid="token-rooms" onInput={(e) => setRooms((e.currentTarget as HTMLInputElement).value)} />
        <select aria-label="Expires" value={ttl} onChange={(e) => setTtl((e.currentTarget as HTMLSelectElement).value)}>
          <option value="3600">in an hour</option>
          <option value="86400">in a day</option>
          <option value="604800">in 7 days</option>
          <option value="">never (until revoked)</option>
        </select>
        <button type="submit" class="primary" data-testid="token-create" disabled={!name.trim()}>
          Make token
        </button>
      </form>
      {made ? (
        <p class="made" data-testid="token-made">
          Shown only now: <code data-testid="token-secret">{made.secret}</code> · <a href={made.url} data-testid="token-url">console link</a>
        </p>
      ) : null}
      <table class="grid" data-testid="tokens-table">
        <thead>
          <tr>
            <th>Name</th>
            <th>Role</th>
            <th>Rooms</th>
            <th>Expires</th>
            <th>State</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {list.map((t) => (
            <tr key={t.id} data-testid="token-row" data-token={t.id} data-name={t.name}>
              <td>
                {showControls(t.name)} <span class="dim">{t.id}</span>
              </td>
              <td>{t.role}</td>
              <td>{t.rooms.map(showControls).join(", ")}</td>
              <td>{when(t.expiresAtMs)}</td>
              <td data-testid="token-state">{t.revokedAtMs ? "revoked" : t.active ? "active" : "expired"}</td>
              <td>
                {t.active && !t.revokedAtMs ? (
                  <button
                    type="button"
                    class="danger"
                    data-testid="token-revoke"
                    onClick={async () => {
                      if (!confirm(`Revoke ${t.name}? Its requests fail at once and its sockets close.`)) return;
                      await app.act("revoking the token", () => call(app.api.DELETE("/v1/tokens/{tokenId}", { params: { path: { tokenId: t.id } } })));
                      setRound((n) => n + 1);
                    }}
                  >
                    Revoke
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** The most audit records read for the page (newest kept). */
const AUDIT_MAX = 5000;

function Audit({ app }: { app: App }) {
  const [records, setRecords] = useState<Schemas["AuditEntry"][]>([]);
  const [token, setToken] = useState("");
  const [room, setRoom] = useState("");
  const [route, setRoute] = useState("");
  useEffect(() => {
    void (async () => {
      let after = 0;
      const all: Schemas["AuditEntry"][] = [];
      for (;;) {
        const page = await app.act("reading the audit trail", () => call(app.api.GET("/v1/audit", { params: { query: { after, limit: 1000 } } })));
        if (!page || !page.data.length) break;
        all.push(...page.data);
        if (all.length > AUDIT_MAX) all.splice(0, all.length - AUDIT_MAX);
        after = page.data[page.data.length - 1]!.seq;
        if (page.data.length < 1000) break;
      }
      setRecords(all.reverse());
    })();
  }, []);
  const has = (v: string | null | undefined, q: string) => !q || (v ?? "").toLowerCase().includes(q.toLowerCase());
  const shown = records.filter((r) => has(`${r.tokenId ?? ""} ${r.actor ?? ""}`, token) && has(r.roomId, room) && has(`${r.method} ${r.route}`, route));
  return (
    <>
      <div class="row" data-testid="audit-filters">
        <input aria-label="Token or name" placeholder="token or name" value={token} data-testid="audit-token" onInput={(e) => setToken((e.currentTarget as HTMLInputElement).value)} />
        <input aria-label="Room" placeholder="room" value={room} data-testid="audit-room" onInput={(e) => setRoom((e.currentTarget as HTMLInputElement).value)} />
        <input aria-label="Method or route" placeholder="method or route" value={route} data-testid="audit-route" onInput={(e) => setRoute((e.currentTarget as HTMLInputElement).value)} />
        <span class="dim">
          {shown.length} of {records.length}
        </span>
      </div>
      <table class="grid" data-testid="audit-table">
        <thead>
          <tr>
            <th>When</th>
            <th>Who</th>
            <th>Request</th>
            <th>Room / session</th>
            <th>Answer</th>
          </tr>
        </thead>
        <tbody>
          {shown.slice(0, 500).map((r) => (
            <tr key={r.seq} data-testid="audit-row" data-seq={r.seq}>
              <td>{when(r.atMs)}</td>
              <td>{r.actor ? showControls(r.actor) : <span class="dim">no valid token</span>}</td>
              <td>
                <code>
                  {r.method} {showControls(r.route)}
                </code>
              </td>
              <td>
                {showControls(r.roomId ?? "")}
                {r.sessionId ? ` / ${showControls(r.sessionId)}` : ""}
              </td>
              <td>
                {r.status}
                {r.code ? ` ${r.code}` : ""}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

function Webhooks({ app }: { app: App }) {
  const [list, setList] = useState<Schemas["WebhookInfo"][]>([]);
  const [round, setRound] = useState(0);
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState("turn.completed, session.closed");
  const [rooms, setRooms] = useState("*");
  const [secret, setSecret] = useState<string | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  useEffect(() => {
    void app.act("listing the webhooks", () => call(app.api.GET("/v1/webhooks"))).then((l) => l && setList(l.data));
  }, [round]);
  const words = (s: string) => s.split(",").map((x) => x.trim()).filter(Boolean);
  return (
    <>
      <form
        class="row"
        data-testid="webhook-form"
        onSubmit={async (e) => {
          e.preventDefault();
          const body: Schemas["CreateWebhook"] = { url: url.trim(), events: words(events), rooms: words(rooms) };
          const r = await app.act("making a webhook", () => call(app.api.POST("/v1/webhooks", { body })));
          if (!r) return;
          setSecret(r.secret);
          setUrl("");
          setRound((n) => n + 1);
        }}
      >
        <input aria-label="URL" placeholder="https://…" value={url} required data-testid="webhook-url" onInput={(e) => setUrl((e.currentTarget as HTMLInputElement).value)} />
        <input aria-label="Event types (comma separated)" value={events} data-testid="webhook-events" onInput={(e) => setEvents((e.currentTarget as HTMLInputElement).value)} />
        <input aria-label="Rooms (comma separated, * for every room)" value={rooms} data-testid="webhook-rooms" onInput={(e) => setRooms((e.currentTarget as HTMLInputElement).value)} />
        <button type="submit" class="primary" data-testid="webhook-create" disabled={!url.trim()}>
          Make webhook
        </button>
      </form>
      {secret ? (
        <p class="made" data-testid="webhook-made">
          Its signing secret, shown only now: <code data-testid="webhook-secret">{secret}</code>
        </p>
      ) : null}
      <ul class="list" data-testid="webhooks-list">
        {list.map((w) => (
          <li key={w.id} class="webhook" data-testid="webhook-row" data-webhook={w.id} data-enabled={w.enabled ? "true" : "false"}>
            <div class="row spread">
              <span>
                <code>{showControls(w.url)}</code> <span class="dim">{w.events.join(", ")} · {w.rooms.length ? w.rooms.join(", ") : "every room"}</span>
                {w.enabled ? null : <span class="badge">paused</span>}
              </span>
              <span class="row">
                <button type="button" data-testid="webhook-test" onClick={async () => {
                  await app.act("sending a test", () => call(app.api.POST("/v1/webhooks/{webhookId}/test", { params: { path: { webhookId: w.id } } })));
                  setOpen(w.id);
                  setRound((n) => n + 1);
                }}>
                  Send test
                </button>
                <button type="button" data-testid="webhook-toggle" onClick={async () => {
                  await app.act("changing the webhook", () => call(app.api.PATCH("/v1/webhooks/{webhookId}", { params: { path: { webhookId: w.id } }, body: { enabled: !w.enabled } })));
                  setRound((n) => n + 1);
                }}>
                  {w.enabled ? "Pause" : "Resume"}
                </button>
                <button type="button" data-testid="webhook-deliveries-toggle" aria-expanded={open === w.id} onClick={() => setOpen(open === w.id ? null : w.id)}>
                  Deliveries
                </button>
                <button type="button" class="danger" data-testid="webhook-delete" onClick={async () => {
                  if (!confirm(`Delete the webhook to ${w.url} and its deliveries?`)) return;
                  // Its deliveries go with it: not read again.
                  if (open === w.id) setOpen(null);
                  await app.act("deleting the webhook", () => call(app.api.DELETE("/v1/webhooks/{webhookId}", { params: { path: { webhookId: w.id } } })));
                  setRound((n) => n + 1);
                }}>
                  Delete
                </button>
              </span>
            </div>
            {open === w.id ? <Deliveries app={app} id={w.id} round={round} /> : null}
          </li>
        ))}
        {!list.length ? <li class="dim">No webhooks.</li> : null}
      </ul>
    </>
  );
}

function Deliveries({ app, id, round }: { app: App; id: string; round: number }) {
  const [list, setList] = useState<Schemas["Delivery"][] | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    void app.act("reading the deliveries", () => call(app.api.GET("/v1/webhooks/{webhookId}/deliveries", { params: { path: { webhookId: id } } }))).then((l) => setList(l?.data ?? []));
  }, [id, round, tick]);
  // While a delivery is pending, read them again every second: its attempts come in.
  const pending = list?.some((d) => d.state === "pending") ?? false;
  useEffect(() => {
    if (!pending) return;
    const t = setTimeout(() => setTick((n) => n + 1), 1000);
    return () => clearTimeout(t);
  }, [pending, tick]);
  if (!list) return <p class="dim">Reading…</p>;
  if (!list.length) return <p class="dim" data-testid="deliveries-empty">No deliveries yet.</p>;
  return (
    <table class="grid" data-testid="deliveries-table">
      <tbody>
        {list.map((d) => (
          <tr key={d.id} data-testid="delivery-row" data-state={d.state} data-kind={d.type}>
            <td>{when(d.createdAtMs)}</td>
            <td>{d.type}</td>
            <td>{d.state}</td>
            <td>
              {d.attempts} attempt{d.attempts === 1 ? "" : "s"}
              {d.lastAttempts.length ? `: ${d.lastAttempts.map((a) => (a.status ? `${a.status}` : showControls(a.error ?? "no answer"))).join(", ")}` : ""}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
