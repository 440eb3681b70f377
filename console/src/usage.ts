// What a session or a room spent and its budget, as the console says it, DOM-free: the header's
// "1,003 of 2,000 tokens · $0.50 of $5.00" and its meter's share, a burn rate over the recent
// turns, the Budget… form's input checked into a `Budget`, the words a 409 `budget_exhausted` adds,
// and `Latest`, which asks the server again (debounced) and keeps only the newest request's answer.
// The numbers are the server's (`GET …/usage`): the console does not add up events itself.

import type { Schemas } from "../../openapi/clients/typescript/src/client.js";
import type { Item } from "./model.js";

export type SessionUsage = Schemas["SessionUsage"];
export type RoomUsage = Schemas["RoomUsage"];
export type Budget = Schemas["Budget"];
export type BudgetState = Schemas["BudgetState"];
export type OnExhausted = Schemas["OnExhausted"];
export type UsageTotals = Schemas["UsageTotals"];

/** The Budget… form's choices of what a reached budget does to the running turn (no new one starts either way). */
export const ON_EXHAUSTED: readonly { value: OnExhausted; label: string }[] = [
  { value: "finish", label: "let the running turn finish" },
  { value: "cancel", label: "cancel the running turn" },
];

/** The events after which a session's (and its room's) usage is read again. */
const REFRESHING = new Set<string>(["usage.updated", "turn.completed", "turn.failed", "turn.canceled", "notice", "budget.exhausted"]);

/** Whether an event of a session may have changed what it spent or whether its budget is reached (`budget.exhausted`, and its notice). */
export function refreshesUsage(type: string): boolean {
  return REFRESHING.has(type);
}

/** Tokens that count against a budget, as the server counts them: what went in and what came out. */
export function tokensOf(t: UsageTotals): number {
  return t.inputTokens + t.outputTokens;
}

/** A count with thousands separators, the same in every locale: "1,234,567". */
export function countText(n: number): string {
  const s = String(Math.round(Math.abs(n)));
  return `${n < 0 ? "-" : ""}${s.replace(/\B(?=(\d{3})+(?!\d))/g, ",")}`;
}

/**
 * A cost in the agent's currency: "$1.25" for USD, else "1.25 EUR" (or "12 credits"); small amounts
 * keep their first significant digits ("$0.0042"), so a cheap turn does not read as nothing.
 */
export function costText(amount: number, currency: string | null | undefined): string {
  const abs = Math.abs(amount);
  // Two significant digits below 1 (at most 6 decimals), two decimals from 1 up.
  const digits = abs === 0 || abs >= 1 ? 2 : Math.min(6, Math.max(2, 1 - Math.floor(Math.log10(abs))));
  // "0.0040" → "0.004", but money keeps its cents ("1.50", "0.50").
  const n = amount.toFixed(digits).replace(/(\.\d{2}\d*?)0+$/, "$1");
  if (!currency) return n;
  if (currency === "USD") return amount < 0 ? `-$${n.slice(1)}` : `$${n}`;
  return `${n} ${currency}`;
}

/** How full a budget is, for the meter: `ok`, `near` (80 % or more) or `exhausted`. */
export type UsageLevel = "ok" | "near" | "exhausted";

/** What the header (or the room panel) shows of a usage answer. */
export interface UsageView {
  tokens: number;
  /**
   * "1,003 tokens · $0.50", against a budget "1,003 of 2,000 tokens · $0.50 of $5.00" (each limit
   * where there is one; the cost where the agent reports one or the budget limits it).
   */
  text: string;
  /** The budget's share used, 0–1 (the larger of tokens' and cost's; 1 once reached); null without a limit. */
  fraction: number | null;
  level: UsageLevel;
  exhausted: boolean;
  /** A tooltip: the budget and what happens when it is reached. */
  title: string;
}

/** What a usage answer (a session's or a room's) reads as. */
export function usageView(u: { totals: UsageTotals; budget?: Budget | null; state: BudgetState }): UsageView {
  const tokens = u.state.tokens;
  const currency = u.totals.cost?.currency ?? null;
  const cost = u.state.cost ?? u.totals.cost?.amount ?? null;
  const b = u.budget ?? null;
  const plural = (n: number) => `${countText(n)} token${n === 1 ? "" : "s"}`;
  const parts: string[] = [];
  const limits: string[] = [];
  const shares: number[] = [];
  if (b?.maxTokens != null) {
    parts.push(`${countText(tokens)} of ${plural(b.maxTokens)}`);
    limits.push(plural(b.maxTokens));
    shares.push(tokens / b.maxTokens);
  } else parts.push(plural(tokens));
  if (b?.maxCost != null) {
    parts.push(`${costText(cost ?? 0, currency)} of ${costText(b.maxCost, currency)}`);
    limits.push(costText(b.maxCost, currency));
    shares.push((cost ?? 0) / b.maxCost);
  } else if (cost !== null) parts.push(costText(cost, currency));
  const exhausted = u.state.exhausted;
  const fraction = shares.length ? (exhausted ? 1 : Math.min(1, Math.max(0, ...shares))) : null;
  const level: UsageLevel = exhausted ? "exhausted" : fraction !== null && fraction >= 0.8 ? "near" : "ok";
  const then = b?.onExhausted === "cancel" ? "the running turn is canceled" : "the running turn finishes";
  const title = limits.length ? `Budget: ${limits.join(" and ")}. Once it is reached ${then}, and no new turn starts until it is raised.` : "No budget: nothing limits what is spent.";
  return { tokens, text: parts.join(" · "), fraction, level, exhausted, title };
}

/** One of the session's turns with what it spent and how long it worked. */
export interface TurnSpan {
  turnId: string;
  tokens: number;
  startedAtMs: number;
  /** Its last usage report. */
  endedAtMs: number;
}

/**
 * The session's turns, oldest first, that both the transcript (when each started, when it last
 * reported usage) and the server's ledger (what each spent) know. Turns without a usage report of
 * their own (the spending a restarted agent reported later) are left out.
 */
export function turnSpans(items: readonly Item[], turns: SessionUsage["turns"]): TurnSpan[] {
  const started = new Map<string, number>();
  const reported = new Map<string, number>();
  for (const i of items) {
    if (i.kind === "turn") started.set(i.turnId, i.at);
    else if (i.kind === "usage" && i.turnId) reported.set(i.turnId, i.at);
  }
  const out: TurnSpan[] = [];
  for (const t of turns) {
    const start = started.get(t.turnId);
    const end = reported.get(t.turnId);
    if (start === undefined || end === undefined || end < start) continue;
    out.push({ turnId: t.turnId, tokens: tokensOf(t.usage), startedAtMs: start, endedAtMs: end });
  }
  return out;
}

/** Below this much working time a rate says little (a scripted turn takes milliseconds). */
const MIN_RATE_MS = 1000;

/**
 * Tokens per minute of the agent's working time (each turn from its start to its last usage
 * report, the time between turns left out) over the latest `recent` turns; null when they worked
 * for less than a second in all.
 */
export function burnRate(spans: readonly TurnSpan[], recent = 5): { perMinute: number; turns: number } | null {
  const last = spans.slice(-recent);
  const ms = last.reduce((sum, s) => sum + (s.endedAtMs - s.startedAtMs), 0);
  if (!last.length || ms < MIN_RATE_MS) return null;
  const tokens = last.reduce((sum, s) => sum + s.tokens, 0);
  return { perMinute: (tokens * 60_000) / ms, turns: last.length };
}

/** "≈ 1,200 tokens/min over the last 3 turns". */
export function rateText(r: { perMinute: number; turns: number }): string {
  return `≈ ${countText(r.perMinute)} tokens/min over the last ${r.turns === 1 ? "turn" : `${r.turns} turns`}`;
}

/** The Budget… form's fields as typed. */
export interface BudgetDraft {
  maxTokens: string;
  maxCost: string;
  onExhausted: OnExhausted;
}

/** The form filled in from the budget in force (empty without one). */
export function draftOf(b: Budget | null | undefined): BudgetDraft {
  return { maxTokens: b?.maxTokens != null ? String(b.maxTokens) : "", maxCost: b?.maxCost != null ? String(b.maxCost) : "", onExhausted: b?.onExhausted ?? "finish" };
}

/**
 * The budget the form asks for, or why it cannot be sent. A limit may be left empty (none of that
 * kind), not both: no limit at all is **Clear**'s (the server's default). "10,000" and "$5" are
 * taken as 10000 and 5; the server checks again.
 */
export function budgetOfDraft(d: BudgetDraft): { budget: Budget } | { error: string } {
  const tokensIn = d.maxTokens.replace(/[\s,_]/g, "");
  const costIn = d.maxCost.trim().replace(/^\$/, "").trim();
  const budget: Budget = { onExhausted: d.onExhausted };
  if (tokensIn) {
    const n = Number(tokensIn);
    if (!/^\d+$/.test(tokensIn) || !Number.isSafeInteger(n) || n < 1) return { error: `The token limit must be a whole number of at least 1 (not “${d.maxTokens.trim()}”).` };
    budget.maxTokens = n;
  }
  if (costIn) {
    const c = Number(costIn);
    if (!/^\d*\.?\d+$/.test(costIn) || !Number.isFinite(c) || c <= 0) return { error: `The cost limit must be a number above 0 (not “${d.maxCost.trim()}”).` };
    budget.maxCost = c;
  }
  if (budget.maxTokens === undefined && budget.maxCost === undefined) return { error: "Give a token limit, a cost limit or both (Clear goes back to the server's default budget)." };
  return { budget };
}

/**
 * What a 409 `budget_exhausted`'s details add to its message: where spending stands against the
 * limit reached ("2,003 of 2,000 tokens spent"); null when the details say nothing usable.
 */
export function exhaustedText(details: Record<string, unknown> | null): string | null {
  const budget = details?.budget as Budget | null | undefined;
  const state = details?.state as BudgetState | null | undefined;
  if (!budget || !state || typeof state.tokens !== "number") return null;
  const parts: string[] = [];
  if (budget.maxTokens != null) parts.push(`${countText(state.tokens)} of ${countText(budget.maxTokens)} tokens`);
  if (budget.maxCost != null && state.cost != null) parts.push(`${costText(state.cost, null)} of ${costText(budget.maxCost, null)} in cost`);
  if (!parts.length) return null;
  return `${details?.scope === "room" ? "the room has" : "this session has"} spent ${parts.join(" and ")}`;
}

/** Timers, given by the unit tests. */
export interface Clock {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}
const realClock: Clock = { set: (fn, ms) => setTimeout(fn, ms), clear: (h) => clearTimeout(h as ReturnType<typeof setTimeout>) };

/**
 * One usage answer kept current. `soon()` reads it again once `delayMs` passed without another
 * call (a burst of events, or a log replayed when a room opens, costs one request); `run()` makes
 * any request that answers it (the GET, or a PUT that answers the new budget). An answer is taken
 * only when no request was made after its own: a slow GET must not undo the budget just set.
 */
export class Latest<T> {
  value: T | null = null;
  private issued = 0;
  private timer: unknown = null;

  constructor(
    private readonly load: () => Promise<T>,
    private readonly onChange: () => void,
    private readonly delayMs = 250,
    private readonly clock: Clock = realClock,
  ) {}

  /** Reads it again after a quiet moment (calls meanwhile push that moment back). */
  soon(): void {
    if (this.timer !== null) this.clock.clear(this.timer);
    this.timer = this.clock.set(() => {
      this.timer = null;
      void this.now();
    }, this.delayMs);
  }

  /** Reads it now; a failure keeps what is shown (the next event asks again). */
  async now(): Promise<void> {
    try {
      await this.run(this.load);
    } catch {
      // Nothing to show beyond what is shown (a session gone, the server away).
    }
  }

  /** Makes `request` the newest; its answer is taken unless a newer request was made meanwhile. Rejects as it does. */
  async run<R extends T>(request: () => Promise<R>): Promise<R> {
    const n = ++this.issued;
    const v = await request();
    if (n === this.issued) {
      this.value = v;
      this.onChange();
    }
    return v;
  }
}
