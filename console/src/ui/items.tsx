// The transcript: one component per item kind. Items are updated in place as events stream in;
// each carries a `rev`, so an item re-renders only when it changed.

import { Component } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import type { Item, Transcript as TranscriptModel } from "../model.js";
import { Markdown } from "./md.js";
import { showControls } from "../text.js";
import { permissionDetail, resolutionText, titleRepeatsQuestion, usageText } from "../present.js";
import { approvalCommand, callHead, planText, questionText, shown } from "../shown.js";
import type { Schemas } from "../../../openapi/clients/typescript/src/client.js";
import { CommittedView, RestoredView, TurnChangesView, type WorkspaceActions } from "./workspace.js";
import { TurnAttachments } from "./attachments.js";
import { DiffView } from "./diffview.js";

type Decision = Schemas["Decision"];
type AnswerRequest = Schemas["AnswerRequest"];

export interface ItemContext {
  /** Answers an interaction of this transcript's session. */
  answer(requestId: string, body: AnswerRequest): Promise<unknown>;
  /** Reads an image of this session's turns (its `attachment`), with the token. */
  attachment(attachment: string): Promise<Blob>;
  /** Operation id of the session's current goal, to mark the turns that pursued it. */
  goalOperationId: string | null;
  /** Whether a pending interaction now shown may move the focus to its answer (true once per interaction). */
  claimFocus(requestId: string): boolean;
  /** Restore, undo, fork and diffs of the session's workspace (null: a session without checkpoints). */
  workspace: WorkspaceActions | null;
  /** Whether the token may answer interactions (approver and admin); otherwise they are shown read-only. */
  canAnswer: boolean;
  /** This page's token (`GET /v1/me`): turns it started read "You", others' the actor's name. */
  myTokenId: string | null;
}

const DECISION_LABEL: Record<Decision, string> = {
  accept: "Accept",
  acceptForSession: "Accept for the session",
  decline: "Decline",
  cancel: "Cancel the turn",
};

export function TranscriptItems({ transcript, ctx, items }: { transcript: TranscriptModel; ctx: ItemContext; items?: Item[] }) {
  return (
    <>
      {(items ?? transcript.items).map((item) => (
        <ItemView key={item.key} item={item} rev={item.rev} ctx={ctx} gated={transcript.awaitingApproval(item)} />
      ))}
    </>
  );
}

type ItemProps = { item: Item; rev: number; ctx: ItemContext; gated: boolean };

class ItemView extends Component<ItemProps> {
  override shouldComponentUpdate(next: ItemProps) {
    const [a, b] = [next.ctx, this.props.ctx];
    return (
      next.item !== this.props.item ||
      next.rev !== this.props.rev ||
      next.gated !== this.props.gated ||
      a.goalOperationId !== b.goalOperationId ||
      a.workspace !== b.workspace ||
      a.canAnswer !== b.canAnswer ||
      a.myTokenId !== b.myTokenId
    );
  }

  override render() {
    const { item, ctx, gated } = this.props;
    switch (item.kind) {
      case "turn":
        return <TurnView item={item} ctx={ctx} />;
      case "steer":
        return (
          <div class="entry user steer" data-testid="user-message" data-steer="true">
            <div class="who">You (steering the running turn)</div>
            {item.text ? <Markdown text={item.text} /> : null}
            <TurnAttachments images={item.images} files={item.files} load={ctx.attachment} />
          </div>
        );
      case "message":
        return (
          <div class={`entry agent${item.done ? "" : " streaming"}`} data-testid="message" data-done={item.done ? "true" : "false"}>
            <div class="who">Agent</div>
            <Markdown text={item.text} />
          </div>
        );
      case "reasoning":
        return (
          <details class="entry reasoning" data-testid="reasoning">
            <summary>
              Reasoning{item.done ? "" : " (thinking…)"}
              <span class="dim"> · {firstLine(item.text)}</span>
            </summary>
            <Markdown text={item.text} />
          </details>
        );
      case "call":
        return <CallView item={item} gated={gated} />;
      case "interaction":
        return <InteractionView item={item} ctx={ctx} />;
      case "plan": {
        const plan = planText(item);
        return (
          <div class="entry plan" data-testid="plan">
            <div class="who">Plan</div>
            {plan.explanation ? <p>{plan.explanation}</p> : null}
            <ul class="checklist">
              {item.steps.map((s, i) => (
                <li class={`step-${s.status}`} data-status={s.status}>
                  <input type="checkbox" checked={s.status === "completed"} disabled aria-label={planLabel(s.status)} />
                  <span>{plan.steps[i]}</span>
                  {s.status === "inProgress" ? <span class="badge working">in progress</span> : null}
                </li>
              ))}
            </ul>
          </div>
        );
      }
      case "usage":
        return (
          <div class="entry usage dim" data-testid="usage">
            {usageText(item.usage)}
          </div>
        );
      case "notice":
        return (
          <div class={`entry notice level-${item.level}`} data-testid="notice">
            <span class={`badge ${item.level}`}>{item.level}</span> {item.message}
          </div>
        );
      case "error":
        return (
          <div class="entry error" data-testid="error">
            <strong>Failed</strong> <code>{item.code}</code>: {item.message}
          </div>
        );
      case "canceled":
        return (
          <div class="entry info" data-testid="canceled">
            Turn canceled ({item.reason})
          </div>
        );
      case "info":
        return (
          <div class="entry info" data-testid="info">
            {item.text}
          </div>
        );
      case "changes":
        return <TurnChangesView item={item} ws={ctx.workspace} />;
      case "restored":
        return <RestoredView item={item} ws={ctx.workspace} />;
      case "committed":
        return <CommittedView item={item} />;
    }
  }
}

function planLabel(status: string): string {
  return status === "completed" ? "done" : status === "inProgress" ? "in progress" : "pending";
}

function firstLine(text: string): string {
  const line = text.trim().split("\n")[0] ?? "";
  return line.length > 80 ? `${line.slice(0, 80)}…` : line;
}

function TurnView({ item, ctx }: { item: Extract<Item, { kind: "turn" }>; ctx: ItemContext }) {
  const origin =
    item.origin === "goal_continuation" ? (
      <span class="badge goal" data-testid="turn-origin" data-origin={item.origin}>
        goal continuation{item.goalOperationId && item.goalOperationId === ctx.goalOperationId ? " (current goal)" : ""}
      </span>
    ) : item.origin === "provider" ? (
      <span class="badge" data-testid="turn-origin" data-origin={item.origin}>
        started by the agent
      </span>
    ) : null;
  const time = new Date(item.at).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  // Who sent it: "You" for this page's token (or when the event names none), else the token's name.
  const who =
    item.actor && ctx.myTokenId !== null && item.actor.tokenId !== ctx.myTokenId ? (
      <span data-testid="turn-actor" title={`token ${item.actor.tokenId}`}>
        {showControls(item.actor.name)}
      </span>
    ) : (
      "You"
    );
  if (!item.text && !item.images.length && !item.files.length) {
    return (
      <div class="turn-divider" data-testid="turn" data-turn={item.turnId} data-origin={item.origin}>
        <span>
          {origin} <span class="dim">{time}</span>
        </span>
      </div>
    );
  }
  return (
    <div class="entry user" data-testid="user-message" data-turn={item.turnId} data-origin={item.origin}>
      <div class="who">
        {who} {origin} <span class="dim">{time}</span>
      </div>
      {item.text ? <Markdown text={item.text} /> : null}
      <TurnAttachments images={item.images} files={item.files} load={ctx.attachment} />
    </div>
  );
}

const CALL_ICON: Record<string, string> = { command: "$", tool: "⚙", fileChange: "✎", mcp: "⚙", webSearch: "⌕", other: "•" };

function CallView({ item, gated }: { item: Extract<Item, { kind: "call" }>; gated: boolean }) {
  const status = gated ? "awaiting approval" : item.status;
  const head = callHead(item);
  return (
    <div class={`entry call call-${item.callKind} status-${item.status}`} data-testid="call" data-status={item.status} data-gated={gated ? "true" : undefined} data-call={item.callId}>
      <div class="call-head">
        <span class="call-icon" aria-hidden="true">
          {CALL_ICON[item.callKind] ?? "•"}
        </span>
        <span class="call-name">{head.title}</span>
        {head.tool ? <span class="dim"> ({head.tool})</span> : head.args ? <code class="dim call-args">{head.args}</code> : null}
        <span class={`badge ${gated ? "waiting-approval" : status}`}>
          {status}
          {item.exitCode != null ? ` · exit ${item.exitCode}` : ""}
        </span>
      </div>
      {head.cwd ? <div class="dim call-cwd">in {head.cwd}</div> : null}
      {item.output ? (
        <pre class="terminal" data-testid="call-output" tabIndex={0} aria-label={`output of ${head.title}`}>
          {head.output}
        </pre>
      ) : null}
      {item.changes.map((c) => (
        <DiffView change={c} />
      ))}
    </div>
  );
}

function InteractionView({ item, ctx }: { item: Extract<Item, { kind: "interaction" }>; ctx: ItemContext }) {
  const r = item.request;
  const questions = r.questions ?? [];
  const [answers, setAnswers] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const box = useRef<HTMLDivElement>(null);
  const pending = !item.resolved;
  const agentOptions = r.agentOptions ?? [];
  // A viewer or operator sees the request, not the means to answer it.
  const answerable = pending && ctx.canAnswer;
  // A new question or approval takes the focus to its first answer control, once.
  useEffect(() => {
    if (!answerable || !ctx.claimFocus(r.requestId)) return;
    const first = box.current?.querySelector<HTMLElement>("[data-answer]:not([disabled])");
    first?.focus({ preventScroll: false });
  }, [answerable, r.requestId]);
  const decide = async (decision: Decision, optionId?: string) => {
    setBusy(true);
    const body: AnswerRequest = { decision };
    if (optionId) {
      body.optionId = optionId;
      item.picked = optionId;
    }
    if (questions.length && (decision === "accept" || decision === "acceptForSession")) {
      body.answers = Object.fromEntries(questions.map((q) => [q.id, answers[q.id] ?? ""]));
    }
    const ok = await ctx.answer(r.requestId, body);
    if (ok === undefined && optionId && item.picked === optionId) item.picked = null;
    setBusy(false);
  };
  const detail = agentOptions.length ? permissionDetail(r.detail) : r.detail ?? null;
  const command = approvalCommand(r);
  const showTitle = !(r.kind === "userInput" && questions.length && titleRepeatsQuestion(r.title, questions));
  // Which of the agent's options was picked: the one answered here, else the only one the decision stands for.
  const pickedOption = item.resolved && agentOptions.length ? (agentOptions.find((o) => o.optionId === item.picked) ?? onlyOne(agentOptions.filter((o) => o.decision === item.resolved?.decision))) : undefined;
  return (
    <div
      class={`entry interaction${pending ? " pending" : ""}`}
      data-testid="interaction"
      data-kind={r.kind}
      data-request={r.requestId}
      data-state={pending ? "pending" : "resolved"}
      role="group"
      aria-label={showControls(r.title)}
      ref={box}
    >
      <div class="who">
        {r.kind === "userInput" ? "Question" : "Approval"} <span class="dim">· {r.kind}</span>
      </div>
      {showTitle ? <Markdown text={showControls(r.title)} class="interaction-title" /> : null}
      {detail ? (
        <p class="dim detail" data-testid="interaction-detail">
          {detail}
        </p>
      ) : null}
      {command ? (
        <pre class="terminal" data-testid="interaction-command">
          {command.line}
          {command.cwd ? <span class="dim">{command.cwd}</span> : null}
        </pre>
      ) : null}
      {r.diff ? <DiffView change={{ path: "proposed change", kind: "update", diff: r.diff }} /> : null}
      {questions.map((q, i) => {
        const id = `q-${r.requestId}-${q.id}`;
        const options = q.options ?? [];
        const resolved = item.resolved?.answers?.[q.id];
        const asked = questionText(q);
        const said = (
          <>
            {asked.header ? <strong>{asked.header}</strong> : null}
            {asked.question}
          </>
        );
        return (
          <div class="question" data-testid="question">
            {answerable ? (
              <label for={id} data-testid="question-text">
                {said}
              </label>
            ) : (
              <div data-testid="question-text">{said}</div>
            )}
            {answerable ? (
              <>
                <input
                  id={id}
                  data-testid="answer-input"
                  data-question={q.id}
                  data-answer={i === 0 ? "first" : "more"}
                  {...(q.isSecret ? { type: "password" as const } : { type: "text" as const })}
                  autoComplete="off"
                  value={answers[q.id] ?? ""}
                  onInput={(ev) => setAnswers({ ...answers, [q.id]: (ev.currentTarget as HTMLInputElement).value })}
                  onKeyDown={(ev) => {
                    if (ev.key === "Enter" && (r.options.includes("accept") || !r.options.length)) {
                      ev.preventDefault();
                      void decide("accept");
                    }
                  }}
                />
                {options.length ? (
                  <>
                    <div class="choices" role="group" aria-label="Suggested answers">
                      {options.map((o) => (
                        <button type="button" class="chip" title={shown(o.description)} onClick={() => setAnswers({ ...answers, [q.id]: o.label })}>
                          {showControls(o.label)}
                        </button>
                      ))}
                    </div>
                  </>
                ) : null}
              </>
            ) : resolved !== undefined ? (
              <div class="answer">{typeof resolved === "string" ? (q.isSecret ? "••••" : showControls(resolved)) : showControls(resolved.answers.join(", "))}</div>
            ) : null}
          </div>
        );
      })}
      {pending && !answerable ? (
        <p class="dim waiting-answer" data-testid="interaction-waiting" role="note">
          Waiting for someone who may answer (an approver or admin): this token may not.
          {agentOptions.length ? ` The agent offers: ${agentOptions.map((o) => showControls(o.name)).join(", ")}.` : ""}
        </p>
      ) : pending && agentOptions.length ? (
        // The agent's own choices (ACP), each standing for a decision; cancel stays Ensemble's.
        <div class="row decisions" role="group" aria-label="The agent's options">
          {agentOptions.map((o) => (
            <button
              type="button"
              class={o.decision === "accept" ? "primary" : undefined}
              data-testid={`agent-option-${o.optionId}`}
              data-decision={o.decision}
              data-answer="option"
              title={o.kind.replace("_", " ")}
              disabled={busy}
              onClick={() => void decide(o.decision, o.optionId)}
            >
              {showControls(o.name)}
            </button>
          ))}
          {r.options.includes("cancel") ? (
            <button type="button" class="danger" data-testid="decision-cancel" data-answer="option" disabled={busy} onClick={() => void decide("cancel")}>
              {DECISION_LABEL.cancel}
            </button>
          ) : null}
        </div>
      ) : pending ? (
        <div class="row decisions">
          {(r.options.length ? r.options : (["accept", "decline"] as Decision[])).map((d) => (
            <button type="button" class={d === "accept" ? "primary" : d === "cancel" ? "danger" : undefined} data-testid={`decision-${d}`} data-answer="option" disabled={busy} onClick={() => void decide(d)}>
              {questions.length && d === "accept" ? "Answer" : DECISION_LABEL[d]}
            </button>
          ))}
        </div>
      ) : (
        <div class="resolved dim" data-testid="interaction-resolution" data-decision={item.resolved?.decision} data-option={pickedOption?.optionId} data-actor={item.answeredBy?.name}>
          {item.resolved ? resolutionText(item.resolved, pickedOption?.name, item.answeredBy) : ""}
        </div>
      )}
    </div>
  );
}

function onlyOne<T>(list: T[]): T | undefined {
  return list.length === 1 ? list[0] : undefined;
}

