// The burn and the budget: what the open session spent (in its header) and the open room (in the
// nav), as `GET …/usage` last said — against the budget with a meter when there is one, marked once
// it is reached — and for operators a Budget… form that sets it (`PUT …/budget`) or clears it
// (`DELETE`: the server's default again). What is shown is the server's answer, read again after
// the events that change it (see `App.usageEvent`), never added up here.

import { useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import type { App } from "../app.js";
import type { SessionState } from "../model.js";
import { showControls } from "../text.js";
import { budgetOfDraft, burnRate, countText, costText, draftOf, ON_EXHAUSTED, rateText, tokensOf, turnSpans, usageView, type Budget, type BudgetDraft, type OnExhausted, type UsageTotals, type UsageView } from "../usage.js";

type Saved = Promise<{ ok: true } | { ok: false; error: { message: string } }>;

/** The open session's spending, in its header. */
export function SessionUsageLine({ app, st }: { app: App; st: SessionState }) {
  const u = app.sessionUsage(st.id);
  const items = st.transcript.items;
  // The turns' times are the transcript's, what they spent the ledger's: again when either grows.
  const rate = useMemo(() => (u ? burnRate(turnSpans(items, u.turns)) : null), [u, items.length]);
  if (!u) return null;
  const v = usageView(u);
  return (
    <div class={`usage-line level-${v.level}`} data-testid="session-usage" data-tokens={v.tokens} data-level={v.level} data-exhausted={String(v.exhausted)}>
      <span class="usage-label dim">Spent</span>
      <UsageFigures view={v} of="the session's budget" />
      {rate ? (
        <span class="dim" data-testid="usage-rate">
          · {rateText(rate)}
        </span>
      ) : null}
      {app.may("operator") && st.status !== "completed" ? <BudgetControl scope="session" budget={u.budget} currency={u.totals.cost?.currency ?? null} save={(b) => app.setBudget(st.id, b)} /> : null}
    </div>
  );
}

/** The open room's spending, by provider and by session, under its sessions. */
export function RoomUsagePanel({ app, roomId }: { app: App; roomId: string }) {
  const u = app.roomUsage(roomId);
  if (!u) return null;
  const v = usageView(u);
  const line = (t: UsageTotals) => `${countText(tokensOf(t))} tokens${t.cost ? ` · ${costText(t.cost.amount, t.cost.currency)}` : ""}`;
  return (
    <section class="panel room-usage" data-testid="room-usage" data-tokens={v.tokens} data-level={v.level} data-exhausted={String(v.exhausted)} aria-labelledby="room-usage-h">
      <h2 id="room-usage-h">Room usage</h2>
      <div class={`usage-line level-${v.level}`}>
        <UsageFigures view={v} of="the room's budget" />
      </div>
      {u.providers.length || u.sessions.length ? (
        <details class="usage-breakdown">
          <summary>By provider and session</summary>
          <ul class="list" data-testid="room-usage-providers">
            {u.providers.map((p) => (
              <li key={`${p.provider}/${p.model ?? ""}`}>
                {showControls(p.provider)}
                {p.model ? <span class="dim"> ({showControls(p.model)})</span> : null}: {line(p.usage)}
              </li>
            ))}
          </ul>
          <ul class="list" data-testid="room-usage-sessions">
            {u.sessions.map((s) => (
              <li key={s.sessionId} data-session={s.sessionId}>
                {showControls(s.sessionId)}: {line(s.usage)}
              </li>
            ))}
          </ul>
        </details>
      ) : null}
      {app.may("operator") ? <BudgetControl scope="room" budget={u.budget} currency={u.totals.cost?.currency ?? null} save={(b) => app.setRoomBudget(roomId, b)} /> : null}
    </section>
  );
}

/** The figures, the meter against the budget, and "budget reached". */
function UsageFigures({ view, of }: { view: UsageView; of: string }) {
  return (
    <>
      <span class="usage-text" data-testid="usage-text" title={view.title}>
        {view.text}
      </span>
      {view.fraction !== null ? (
        // Native colours: green below 80 %, amber up to the limit, red once reached.
        <meter class="usage-meter" data-testid="usage-meter" min={0} max={1} low={0.8} high={0.999} optimum={0} value={view.fraction} aria-label={`Share of ${of} used: ${Math.round(view.fraction * 100)}%`} title={view.title} />
      ) : null}
      {view.exhausted ? (
        <span class="badge exhausted" data-testid="usage-exhausted" title={view.title}>
          budget reached
        </span>
      ) : null}
    </>
  );
}

/** "Budget…": a small form to set (or clear) a session's or a room's budget; its errors said in it. */
function BudgetControl({ scope, budget, currency, save }: { scope: "session" | "room"; budget: Budget | null | undefined; currency: string | null; save: (b: Budget | null) => Saved }) {
  const [draft, setDraft] = useState<BudgetDraft | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const button = useRef<HTMLButtonElement>(null);
  const first = useRef<HTMLInputElement>(null);
  /** The form just opened (focus its first field) or closed (focus Budget… again). */
  const moved = useRef<"opened" | "closed" | null>(null);
  useLayoutEffect(() => {
    if (moved.current === "opened") first.current?.focus();
    else if (moved.current === "closed") button.current?.focus();
    moved.current = null;
  }, [draft === null]);
  const open = () => {
    setDraft(draftOf(budget));
    setError(null);
    moved.current = "opened";
  };
  const close = () => {
    setDraft(null);
    setError(null);
    moved.current = "closed";
  };
  const send = async (b: Budget | null) => {
    setBusy(true);
    const r = await save(b);
    setBusy(false);
    if (r.ok) close();
    else setError(`${b ? "Setting" : "Clearing"} the ${scope}'s budget failed: ${r.error.message}`);
  };
  if (!draft) {
    return (
      <button type="button" class="budget-open" data-testid="budget-open" ref={button} title={`Set or clear the ${scope}'s budget`} onClick={open}>
        Budget…
      </button>
    );
  }
  const field = (k: "maxTokens" | "maxCost") => (e: Event) => setDraft({ ...draft, [k]: (e.currentTarget as HTMLInputElement).value });
  return (
    <form
      class="budget-form"
      data-testid="budget-form"
      aria-label={`The ${scope}'s budget`}
      onKeyDown={(e) => {
        if (e.key === "Escape") {
          e.preventDefault();
          close();
        }
      }}
      onSubmit={(ev) => {
        ev.preventDefault();
        if (busy) return;
        const parsed = budgetOfDraft(draft);
        if ("error" in parsed) setError(parsed.error);
        else void send(parsed.budget);
      }}
    >
      <label>
        Max tokens
        <input ref={first} data-testid="budget-max-tokens" inputMode="numeric" autoComplete="off" placeholder="none" value={draft.maxTokens} onInput={field("maxTokens")} />
      </label>
      <label>
        Max cost{currency ? ` (${showControls(currency)})` : ""}
        <input data-testid="budget-max-cost" inputMode="decimal" autoComplete="off" placeholder="none" value={draft.maxCost} onInput={field("maxCost")} />
      </label>
      <label>
        When reached
        <select data-testid="budget-on-exhausted" value={draft.onExhausted} onChange={(e) => setDraft({ ...draft, onExhausted: (e.currentTarget as HTMLSelectElement).value as OnExhausted })}>
          {ON_EXHAUSTED.map((o) => (
            <option value={o.value}>{o.label}</option>
          ))}
        </select>
      </label>
      <span class="row">
        <button type="submit" class="primary" data-testid="budget-save" disabled={busy}>
          Set budget
        </button>
        <button type="button" data-testid="budget-clear" disabled={busy} title={`Remove the ${scope}'s own budget: the server's default (if any) applies again`} onClick={() => void send(null)}>
          Clear
        </button>
        <button type="button" data-testid="budget-cancel" title="Close (Escape)" onClick={close}>
          Cancel
        </button>
      </span>
      {error ? (
        <span class="warn" role="alert" data-testid="budget-error">
          {error}
        </span>
      ) : null}
    </form>
  );
}
