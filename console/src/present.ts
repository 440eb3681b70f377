// How things are named and said for a person, from the model's data alone (no DOM, no Preact):
// API errors, usage lines, an agent's permission text, side conversation names. The UI renders these; the unit
// tests check them.

import type { Schemas } from "../../openapi/clients/typescript/src/client.js";
import type { RoomModel, SessionState } from "./model.js";
import { showControls } from "./text.js";
import { byText, type Actor } from "./access.js";
import { formatBytes } from "./attach.js";
import { exhaustedText } from "./usage.js";

/** One line for a person from an API error: its message, what its details add, and its status and code. */
export function errorText(status: number, code: string, message: string, details: Record<string, unknown> | null): string {
  const tail = `(${status || "?"} ${code})`;
  const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
  if (code === "auth_required") {
    // A provider that needs a login: say so, with the provider's own message and what to run.
    const said = typeof details?.authMessage === "string" && details.authMessage.trim() ? details.authMessage.trim() : message;
    const login = typeof details?.loginCommand === "string" && details.loginCommand ? ` To log in, run \`${details.loginCommand}\` where the server runs, then send again.` : "";
    return `the agent needs authentication before it can take a turn: ${said.replace(/[.\s]+$/, "")}.${login} ${tail}`;
  }
  const branch = typeof details?.branch === "string" ? details.branch : null;
  if (code === "branch_exists" && branch && !message.includes(branch)) return `${message}: branch ${showControls(branch)} exists already; name another one ${tail}`;
  // A size limit (an image too large: `maxBytes`) is said in units a person reads too.
  const max = typeof details?.maxBytes === "number" ? details.maxBytes : null;
  if (max !== null && max >= 1024) {
    const said = message.includes(`${max} bytes`) ? message.replace(`${max} bytes`, `${max} bytes (${formatBytes(max)})`) : `${message} (at most ${formatBytes(max)})`;
    return `${said} ${tail}`;
  }
  // A reached budget: where spending stands against it, and the console's way to raise it (the
  // server's message names the API's).
  if (code === "budget_exhausted") {
    const scope = details?.scope === "room" ? "room" : "session";
    const spent = exhaustedText(details);
    return `the ${scope}'s budget is reached${spent ? `: ${spent}` : ""}; raise it with Budget… ${tail}`;
  }
  const roots = strings(details?.workspaceRoots);
  if (roots.length) return `${message}: allowed are ${roots.join(", ")} and the directories below ${roots.length === 1 ? "it" : "them"} ${tail}`;
  return `${message} ${tail}`;
}

/**
 * A usage line. Some agents (ACP's `usage_update`) report only the total in use and the context
 * window: that is said as it is, not as "0 in · 0 out".
 */
export function usageText(u: Schemas["UsagePayload"]): string {
  const parts: string[] = [];
  const split = u.inputTokens > 0 || u.outputTokens > 0 || (u.cachedInputTokens ?? 0) > 0 || (u.reasoningOutputTokens ?? 0) > 0;
  if (split) {
    parts.push(
      `Tokens: ${u.inputTokens} in${u.cachedInputTokens ? ` (${u.cachedInputTokens} cached)` : ""}`,
      `${u.outputTokens} out${u.reasoningOutputTokens ? ` (${u.reasoningOutputTokens} reasoning)` : ""}`,
      `${u.totalTokens} total`,
    );
  } else {
    parts.push(`Tokens: ${u.totalTokens} (total only)`);
  }
  if (u.lastTurnTotalTokens != null) parts.push(`this turn ${u.lastTurnTotalTokens}`);
  if (u.contextWindow) parts.push(`context window ${u.contextWindow}`);
  return parts.join(" · ");
}

/**
 * The text an agent attached to its permission request, without what the buttons already say.
 * codex-acp, for one, appends "Available Decisions: Approved⏎ApprovedExecpolicyAmendment⏎Abort"
 * (its own names for the options offered); the reason and anything else stay.
 */
export function permissionDetail(detail: string | null | undefined): string | null {
  if (!detail) return null;
  const kept: string[] = [];
  let listing = false;
  for (const line of detail.split("\n")) {
    if (/^\s*available\s+(decisions|options)\s*:/i.test(line)) {
      listing = true;
      continue;
    }
    // The list goes on with one bare name per line.
    if (listing && /^\s*[A-Za-z][\w-]*\s*$/.test(line)) continue;
    listing = false;
    kept.push(line);
  }
  const text = kept.join("\n").trim();
  return text ? text : null;
}

/** Whether the title says nothing the questions below it do not (a single question asked as the title). */
export function titleRepeatsQuestion(title: string, questions: { question: string; header?: string | null }[]): boolean {
  const norm = (t: string) => t.replace(/\s+/g, " ").trim().toLowerCase();
  const t = norm(title);
  return questions.some((q) => norm(q.question) === t || (q.header ? norm(`${q.header}: ${q.question}`) === t : false));
}

/** The titles a session has before anyone names it. */
const DEFAULT_TITLES = new Set(["New session", "Side conversation"]);

/**
 * A side conversation's name: its own title when it has one, else "Side conversation N" (N counts
 * its source's side conversations, oldest first) with the first words of its first question.
 */
export function sideName(room: RoomModel, st: SessionState): string {
  const t = st.session.title.trim();
  if (t && !DEFAULT_TITLES.has(t)) return showControls(t);
  const siblings = [...room.sessions.values()]
    .filter((s) => s.isSide && s.session.sourceSessionId === st.session.sourceSessionId)
    .sort((a, b) => a.session.createdAtMs - b.session.createdAtMs || a.id.localeCompare(b.id));
  const n = siblings.indexOf(st) + 1;
  const first = st.transcript.items.find((i) => i.kind === "turn" && i.text.trim());
  const words = first?.kind === "turn" ? firstWords(first.text, 6) : "";
  return showControls(`Side conversation ${n || 1}${words ? `: ${words}` : ""}`);
}

function firstWords(text: string, n: number): string {
  const words = text.trim().split(/\s+/);
  const head = words.slice(0, n).join(" ");
  const cut = head.length > 48 ? `${head.slice(0, 48)}…` : head;
  return words.length > n && !cut.endsWith("…") ? `${cut}…` : cut;
}

/** How an answered interaction's decision reads. */
export const RESOLVED_LABEL: Record<Schemas["Decision"], string> = {
  accept: "accepted",
  acceptForSession: "accepted for the session",
  decline: "declined",
  cancel: "canceled",
};

/**
 * An answered interaction's line: the decision (and the agent's option picked, if any), and who
 * answered — "declined by alice" when the event names the token that did, else "declined
 * (answered)"; an interaction ended otherwise says how ("canceled (by close)").
 */
export function resolutionText(resolved: Schemas["InteractionResolvedPayload"], option: string | undefined, actor: Actor | null | undefined): string {
  const how = resolved.resolvedBy === "client" ? "answered" : `by ${resolved.resolvedBy}`;
  const said = actor ? `${RESOLVED_LABEL[resolved.decision]}${byText(actor)}${resolved.resolvedBy === "client" ? "" : ` (${how})`}` : null;
  if (option && resolved.decision !== "cancel") return `Chose “${showControls(option)}” (${said ?? `${RESOLVED_LABEL[resolved.decision]}; ${how}`})`;
  return said ?? `${RESOLVED_LABEL[resolved.decision]} (${how})`;
}
