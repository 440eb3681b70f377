// The page's header and message bar: who the token is, the open room's connection, the token box
// (paste one, or forget it), the console's messages and the offer of browser notifications.

import { useState } from "preact/hooks";
import type { App } from "../app.js";
import { whoText } from "../access.js";

/** The token's role and name ("viewer · shared device"): what this page may do. */
export function WhoAmI({ app }: { app: App }) {
  if (!app.token) return null;
  if (app.revoked) {
    return (
      <span class="whoami revoked" data-testid="whoami" data-role="none">
        token revoked
      </span>
    );
  }
  const role = app.role;
  const text = whoText(role, app.me?.name ?? null);
  if (!text) return null;
  return (
    <span class={`whoami role-${role ?? "unknown"}`} data-testid="whoami" data-role={role ?? undefined} title={app.me ? `token ${app.me.tokenId}; ${app.me.rooms.includes("*") ? "every room" : `rooms: ${app.me.rooms.join(", ")}`}` : undefined}>
      <span class="sr-only">Signed in as </span>
      {text}
    </span>
  );
}

export function Connection({ app }: { app: App }) {
  const w = app.selectedRoom ? app.watch(app.selectedRoom) : undefined;
  const state = w?.state ?? "idle";
  const text =
    state === "live"
      ? "live"
      : state === "connecting"
        ? "connecting…"
        : state === "reconnecting"
          ? "reconnecting…"
          : state === "offline"
            ? "offline, retrying"
            : state === "revoked"
              ? "stopped: token revoked or expired"
              : state === "unavailable"
                ? "cannot open this room"
                : "no room open";
  return (
    <span class={`conn conn-${state}`} data-testid="connection-status" data-state={state} role="status" title={w?.error ?? undefined}>
      <span class="dot" aria-hidden="true" />
      {text}
      {state === "offline" ? (
        <button type="button" class="link" onClick={() => w?.retryNow()}>
          retry now
        </button>
      ) : null}
    </span>
  );
}

export function TokenBox({ app }: { app: App }) {
  const [value, setValue] = useState("");
  if (!app.tokenProblem) {
    return (
      <button type="button" class="link token-forget" onClick={() => app.forgetToken()}>
        Forget token
      </button>
    );
  }
  return (
    <form
      class="token-box"
      onSubmit={(ev) => {
        ev.preventDefault();
        if (value.trim()) app.useToken(value.trim());
        setValue("");
      }}
    >
      <span class="warn" data-testid="token-problem" role="alert">
        {app.tokenProblem}
      </span>
      <input type="password" autoComplete="off" aria-label="Bearer token" placeholder="bearer token" data-testid="token-input" value={value} onInput={(e) => setValue((e.currentTarget as HTMLInputElement).value)} />
      <button type="submit" data-testid="use-token">
        Use token
      </button>
    </form>
  );
}

export function Messages({ app }: { app: App }) {
  return (
    <div class="messages">
      {app.token && !app.tokenProblem && app.notifier.prompt ? <NotifyPrompt app={app} /> : null}
      <div role="status" aria-live="polite">
        {app.messages.map((m) => (
          <div class={`message-bar${m.error ? " err" : ""}`} data-testid="app-message" key={m.id}>
            <span>{m.text}</span>
            <button type="button" class="link" aria-label="Dismiss" onClick={() => app.dismiss(m.id)}>
              ×
            </button>
          </div>
        ))}
      </div>
    </div>
  );
}

/**
 * Offers browser notifications once: the browser is asked only from this button's click (never
 * unprompted); "Not now" hides it for good in this browser.
 */
function NotifyPrompt({ app }: { app: App }) {
  return (
    <div class="message-bar notify-prompt" data-testid="notify-prompt" role="region" aria-label="Browser notifications">
      <span>Get notified when a session needs an answer or a turn ends while this tab is in the background?</span>
      <span class="row">
        <button type="button" class="primary" data-testid="notify-enable" onClick={() => void app.enableNotifications()}>
          Turn on notifications
        </button>
        <button type="button" data-testid="notify-dismiss" aria-label="Not now: do not offer notifications again" onClick={() => app.dismissNotifications()}>
          Not now
        </button>
      </span>
    </div>
  );
}
