// Share… (admin): a dialog that makes a token for this room (or every room) with a role and an
// expiry, then shows the console URL that opens it, with a copy button and a QR code drawn here
// (the secret is in this answer only); below, the tokens made so far, each with Revoke… (asked first).

import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import qrcode from "qrcode-generator";
import type { App, TokenInfo } from "../app.js";
import {
  DEFAULT_EXPIRY,
  DEFAULT_SHARE_NAME,
  EXPIRY_CHOICES,
  ROLE_TEXT,
  SHARE_ROLES,
  expiryText,
  lastUseText,
  roomsText,
  shareUrl,
  tokenStateText,
  type Role,
} from "../access.js";
import { showControls } from "../text.js";
import { Confirm } from "./confirm.js";

/**
 * The Share… button. Its dialog is rendered by the page's root (`ShareDialog`), not here: the
 * button lives in the rooms menu, which a phone hides, and a dialog inside it would be hidden too.
 */
export function ShareButton({ app }: { app: App }) {
  return (
    <button type="button" data-testid="share-open" aria-haspopup="dialog" title="Make a link for another device or person, with a role" onClick={() => app.openShare(true)}>
      Share…
    </button>
  );
}

type Created = { token: TokenInfo; secret: string; url: string };

/** The Share dialog (modal): the form, or the link just made; and the token list. Closing it gives the focus back to Share…. */
export function ShareDialog({ app, room }: { app: App; room: string }) {
  const onClose = () => {
    app.openShare(false);
    setTimeout(() => document.querySelector<HTMLElement>('[data-testid="share-open"]')?.focus(), 0);
  };
  const dialog = useRef<HTMLDialogElement>(null);
  const [name, setName] = useState(DEFAULT_SHARE_NAME);
  const [role, setRole] = useState<Role>("viewer");
  const [allRooms, setAllRooms] = useState(false);
  const [expiry, setExpiry] = useState(DEFAULT_EXPIRY);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<Created | null>(null);
  const [listTick, setListTick] = useState(0);
  useEffect(() => {
    const d = dialog.current;
    if (d && !d.open) d.showModal();
    return () => {
      if (d?.open) d.close();
    };
  }, []);
  const submit = async (ev: Event) => {
    ev.preventDefault();
    if (busy || !name.trim()) return;
    setBusy(true);
    setError(null);
    const secs = EXPIRY_CHOICES.find((c) => c.id === expiry)?.secs ?? null;
    const r = await app.createToken({ name: name.trim(), role, rooms: allRooms ? ["*"] : [room], ...(secs !== null ? { ttlSecs: secs } : {}) });
    setBusy(false);
    if (!r.ok) {
      setError(r.error.message);
      return;
    }
    setCreated({ token: r.data.token, secret: r.data.secret, url: shareUrl(location.origin, r.data.secret, room) });
    setListTick((t) => t + 1);
  };
  return (
    // Escape (the dialog's own cancel) and Close both end here.
    <dialog ref={dialog} class="share-dialog" data-testid="share-dialog" aria-labelledby="share-h" onClose={onClose}>
      <div class="row spread">
        <h2 id="share-h">Share the room {showControls(room)}</h2>
        <button type="button" data-testid="share-close" title="Close (Escape)" onClick={onClose}>
          Close
        </button>
      </div>
      {created ? (
        <ShareResult created={created} onAnother={() => setCreated(null)} />
      ) : (
        <form class="share-form" data-testid="share-form" onSubmit={(ev) => void submit(ev)}>
          <label>
            Name <span class="dim">(shown as who did what)</span>
            <input data-testid="share-name" value={name} maxLength={128} autoComplete="off" required onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)} />
          </label>
          <label>
            Role
            <select data-testid="share-role" value={role} onChange={(e) => setRole((e.currentTarget as HTMLSelectElement).value as Role)}>
              {SHARE_ROLES.map((r) => (
                <option value={r}>{ROLE_TEXT[r]}</option>
              ))}
            </select>
          </label>
          <fieldset class="share-rooms">
            <legend>Rooms</legend>
            <label class="check">
              <input type="radio" name="share-rooms" data-testid="share-room-this" checked={!allRooms} onChange={() => setAllRooms(false)} />
              Only this room ({showControls(room)})
            </label>
            <label class="check">
              <input type="radio" name="share-rooms" data-testid="share-room-all" checked={allRooms} onChange={() => setAllRooms(true)} />
              All rooms
            </label>
          </fieldset>
          <label>
            Expires after
            <select data-testid="share-expiry-select" value={expiry} onChange={(e) => setExpiry((e.currentTarget as HTMLSelectElement).value)}>
              {EXPIRY_CHOICES.map((c) => (
                <option value={c.id}>{c.label}</option>
              ))}
            </select>
          </label>
          {error ? (
            <p class="warn" role="alert" data-testid="share-error">
              {error}
            </p>
          ) : null}
          <div class="row">
            <button type="submit" class="primary" data-testid="share-create" disabled={busy || !name.trim()}>
              Create link
            </button>
          </div>
        </form>
      )}
      <TokenList app={app} tick={listTick} />
    </dialog>
  );
}

function ShareResult({ created, onAnother }: { created: Created; onAnother: () => void }) {
  const [copied, setCopied] = useState<"idle" | "copied" | "failed">("idle");
  const url = useRef<HTMLInputElement>(null);
  const t = created.token;
  useEffect(() => {
    url.current?.focus();
    url.current?.select();
  }, []);
  const copy = async () => {
    try {
      if (!navigator.clipboard) throw new Error("no clipboard");
      await navigator.clipboard.writeText(created.url);
      setCopied("copied");
    } catch {
      setCopied("failed");
    }
  };
  const expiry = t.expiresAtMs != null ? `${expiryText(t.expiresAtMs, Date.now())} (${new Date(t.expiresAtMs).toLocaleString()})` : "never expires";
  return (
    <section class="share-result" data-testid="share-result" aria-label="The new link">
      <p>
        <strong>{showControls(t.name)}</strong>: {t.role}, {roomsText(t.rooms)},{" "}
        <span data-testid="share-expiry" data-expires={t.expiresAtMs ?? undefined}>
          {expiry}
        </span>
        .
      </p>
      <div class="row">
        <label class="grow">
          <span class="sr-only">Console URL for this token</span>
          <input ref={url} data-testid="share-url" readOnly value={created.url} onFocus={(e) => (e.currentTarget as HTMLInputElement).select()} />
        </label>
        <button type="button" data-testid="share-copy" data-state={copied} onClick={() => void copy()}>
          {copied === "copied" ? "Copied" : copied === "failed" ? "Copy failed: select and copy it" : "Copy"}
        </button>
      </div>
      <QrCode text={created.url} label={`QR code of the console URL for ${t.name}`} />
      <p class="warn" data-testid="share-once" role="note">
        The secret is shown only this once: copy the link or scan the code now. Whoever has it can act as {t.role} in {roomsText(t.rooms)} until it expires or is revoked.
      </p>
      <div class="row">
        <button type="button" data-testid="share-another" onClick={onAnother}>
          Make another
        </button>
      </div>
    </section>
  );
}

/** `text` as a QR code, drawn as one SVG path of its dark modules (with the 4-module quiet zone). */
export function QrCode({ text, label }: { text: string; label: string }) {
  const { size, d, modules } = useMemo(() => {
    const qr = qrcode(0, "M");
    qr.addData(text, "Byte");
    qr.make();
    const n = qr.getModuleCount();
    const margin = 4;
    let path = "";
    let dark = 0;
    for (let row = 0; row < n; row++) {
      for (let col = 0; col < n; col++) {
        if (!qr.isDark(row, col)) continue;
        path += `M${col + margin} ${row + margin}h1v1h-1z`;
        dark++;
      }
    }
    return { size: n + 2 * margin, d: path, modules: dark };
  }, [text]);
  return (
    <svg class="qr" data-testid="share-qr" data-modules={modules} viewBox={`0 0 ${size} ${size}`} role="img" aria-label={label} shape-rendering="crispEdges">
      <rect width={size} height={size} fill="#fff" />
      <path d={d} fill="#000" />
    </svg>
  );
}

/** The managed tokens: role, rooms, expiry, last use, and Revoke… for the active ones. */
function TokenList({ app, tick }: { app: App; tick: number }) {
  const [list, setList] = useState<TokenInfo[] | { error: string } | null>(null);
  const [again, setAgain] = useState(0);
  useEffect(() => {
    let gone = false;
    app.listTokens().then(
      (r) => !gone && setList(r.data),
      (e) => !gone && setList({ error: (e as Error).message }),
    );
    return () => {
      gone = true;
    };
  }, [tick, again]);
  const now = Date.now();
  return (
    <section class="token-list" aria-labelledby="tokens-h" data-testid="token-list">
      <div class="row spread">
        <h3 id="tokens-h">Tokens</h3>
        <button type="button" data-testid="tokens-refresh" onClick={() => setAgain(again + 1)}>
          Refresh
        </button>
      </div>
      {!list ? (
        <p class="dim">Loading…</p>
      ) : "error" in list ? (
        <p class="warn" role="alert">
          {list.error}
        </p>
      ) : !list.length ? (
        <p class="dim">No tokens made yet (the server's own token is not listed).</p>
      ) : (
        <ul class="list">
          {[...list].reverse().map((t) => (
            <TokenRow key={t.id} app={app} t={t} now={now} onChanged={() => setAgain((n) => n + 1)} />
          ))}
        </ul>
      )}
    </section>
  );
}

function TokenRow({ app, t, now, onChanged }: { app: App; t: TokenInfo; now: number; onChanged: () => void }) {
  const [confirm, setConfirm] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const button = useRef<HTMLButtonElement>(null);
  return (
    <li class={`token-row${t.active ? "" : " inactive"}`} data-testid="token-row" data-token={t.id} data-name={t.name} data-active={t.active ? "true" : "false"}>
      <div>
        <strong>{showControls(t.name)}</strong> <span class={`badge role-${t.role}`}>{t.role}</span> <span class="dim">{roomsText(t.rooms)}</span>
      </div>
      <div class="dim meta">
        <span data-testid="token-state">{tokenStateText(t, now)}</span> · <span data-testid="token-last-use">{lastUseText(t, now)}</span> · made by {showControls(t.createdBy)}
      </div>
      {t.active ? (
        <div class="row">
          {confirm ? (
            <Confirm
              question={`Revoke “${showControls(t.name)}”? Every page using it stops at once.`}
              label={`Confirm revoking ${t.name}`}
              confirmText="Revoke"
              keepText="Keep it"
              testid="confirm-revoke-dialog"
              confirmTestid="confirm-revoke"
              keepTestid="keep-token"
              onConfirm={async () => {
                setConfirm(false);
                const r = await app.revokeToken(t.id);
                if (!r.ok) setError(r.error.message);
                onChanged();
              }}
              onKeep={() => {
                setConfirm(false);
                setTimeout(() => button.current?.focus(), 0);
              }}
            />
          ) : (
            <button type="button" class="danger" data-testid="token-revoke" ref={button} aria-label={`Revoke ${t.name}…`} onClick={() => setConfirm(true)}>
              Revoke…
            </button>
          )}
        </div>
      ) : null}
      {error ? (
        <p class="warn" role="alert">
          {error}
        </p>
      ) : null}
    </li>
  );
}
