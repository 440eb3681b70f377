// Compile-time checks against the generated discriminated unions: an exhaustive `switch` over every
// `Event` variant (each case reads a field only that variant's payload has) and every `ServerFrame`.

import type { Event, EventType, ServerFrame } from "../src/index.js";

/** Every event type of the document: a `Record` over the union, so adding a variant fails the build here. */
export const EVENT_TYPES: Record<EventType, true> = {
  "session.started": true,
  "session.updated": true,
  "session.completed": true,
  "session.failed": true,
  "turn.started": true,
  "turn.completed": true,
  "turn.failed": true,
  "turn.canceled": true,
  "turn.steered": true,
  "message.delta": true,
  "message.completed": true,
  "reasoning.delta": true,
  "reasoning.completed": true,
  "call.started": true,
  "call.updated": true,
  "call.completed": true,
  "interaction.requested": true,
  "interaction.resolved": true,
  "usage.updated": true,
  "commands.updated": true,
  "plan.updated": true,
  "goal.updated": true,
  "goal.cleared": true,
  "goal.reconcile_required": true,
  notice: true,
  "turn.changes": true,
  "workspace.restored": true,
  "workspace.committed": true,
  "queue.updated": true,
  "session.needs_attention": true,
  "budget.exhausted": true,
  "network.blocked": true,
};

/**
 * A one-line summary of an event. The `switch` must handle every variant: the `never` default
 * does not compile when one is missing, and throws at run time for a type the document lacks.
 */
export function summarize(e: Event): string {
  switch (e.type) {
    case "session.started":
      return `session ${e.payload.session.sessionId} started (${e.payload.session.scope}${e.payload.ephemeral ? ", ephemeral" : ""})`;
    case "session.updated":
      return `session ${e.payload.session.sessionId} ${e.payload.reason} → ${e.payload.session.status}`;
    case "session.completed":
      return `session ${e.payload.session.sessionId} completed: ${e.payload.reason}`;
    case "session.failed":
      return `session ${e.payload.session.sessionId} failed: ${e.payload.error.code}`;
    case "turn.started":
      return `turn ${e.payload.turnId} started (${e.payload.origin}${e.payload.goalOperationId ? ` for ${e.payload.goalOperationId}` : ""})`;
    case "turn.completed":
      return `turn ${e.payload.turnId} completed`;
    case "turn.failed":
      return `turn ${e.payload.turnId} failed: ${e.payload.error.code} ${e.payload.error.message}`;
    case "turn.canceled":
      return `turn ${e.payload.turnId} canceled: ${e.payload.reason}`;
    case "turn.steered":
      return `turn ${e.payload.turnId} steered: ${e.payload.input.map((i) => (i.type === "text" ? i.text : `[${i.type}]`)).join(" ")}`;
    case "message.delta":
    case "reasoning.delta":
      return `${e.type} ${e.payload.itemId} +${e.payload.text.length}`;
    case "message.completed":
    case "reasoning.completed":
      return `${e.type} ${e.payload.itemId}: ${e.payload.text}`;
    case "call.started":
      return `call ${e.payload.callId} ${e.payload.kind} ${e.payload.name}${e.payload.command ? ` \`${e.payload.command}\`` : ""}`;
    case "call.updated":
      return `call ${e.payload.callId} +${e.payload.outputDelta?.length ?? 0}`;
    case "call.completed":
      return `call ${e.payload.callId} ${e.payload.status}${e.payload.exitCode != null ? ` exit ${e.payload.exitCode}` : ""}`;
    case "interaction.requested":
      return `interaction ${e.payload.requestId} ${e.payload.kind}: ${e.payload.title} [${e.payload.options.join(", ")}] ${(e.payload.questions ?? []).map((q) => q.id).join(",")}`;
    case "interaction.resolved": {
      const answers = Object.entries(e.payload.answers ?? {}).map(([id, a]) => `${id}=${typeof a === "string" ? a : a.answers.join("|")}`);
      return `interaction ${e.payload.requestId} ${e.payload.decision} by ${e.payload.resolvedBy} ${answers.join(" ")}`;
    }
    case "usage.updated":
      return `usage ${e.payload.inputTokens}+${e.payload.outputTokens}=${e.payload.totalTokens}`;
    case "commands.updated":
      return `commands ${e.payload.commands.map((c) => c.name).join(" ")}`;
    case "plan.updated":
      return `plan ${e.payload.steps.map((s) => `${s.step}:${s.status}`).join("; ")}`;
    case "goal.updated":
      return `goal ${e.payload.goal.status} r${e.payload.goal.revision} (${e.payload.goal.origin}): ${e.payload.goal.objective}`;
    case "goal.cleared":
      return `goal cleared by ${e.payload.operationId} r${e.payload.revision}`;
    case "goal.reconcile_required":
      return `goal reconcile required: ${e.payload.reason}`;
    case "notice":
      return `notice ${e.payload.level}: ${e.payload.message}`;
    case "turn.changes":
      return `changes ${e.payload.files.map((f) => `${f.status} ${f.path}`).join(", ")}`;
    case "workspace.restored":
      return `restored ${e.payload.checkpoint} (undo ${e.payload.undo})`;
    case "workspace.committed":
      return `committed ${e.payload.commit} on ${e.payload.branch}`;
    case "queue.updated":
      return `queue ${e.payload.reason}: ${e.payload.queue.map((q) => q.turnId).join(", ")}`;
    case "session.needs_attention":
      return `needs attention: ${e.payload.title} (${e.payload.requestId})`;
    case "budget.exhausted":
      return `${e.payload.scope} budget exhausted at ${e.payload.state.tokens} tokens`;
    case "network.blocked":
      return `blocked ${e.payload.host}:${e.payload.port}`;
    default: {
      const unhandled: never = e;
      throw new Error(`an event type the document does not declare: ${JSON.stringify(unhandled)}`);
    }
  }
}

/** The same over the frames the server sends. */
export function frameKind(f: ServerFrame): string {
  switch (f.type) {
    case "hello":
      return `hello ${f.roomId} head ${f.headSeq} (${f.sessions.length} sessions)`;
    case "event":
      return `event ${f.event.seq}`;
    case "side_event":
      return `side_event ${f.event.sessionId}#${f.event.seq}`;
    case "resync":
      return `resync ${f.reason} head ${f.headSeq}`;
    case "pong":
      return "pong";
    case "error":
      return `error ${f.code}: ${f.message}`;
    default: {
      const unhandled: never = f;
      throw new Error(`a frame type the document does not declare: ${JSON.stringify(unhandled)}`);
    }
  }
}
