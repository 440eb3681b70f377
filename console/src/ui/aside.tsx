// Beside the open session: its goal (set, pause, resume, clear; the turns the agent started) and the
// open side conversation (its transcript and composer, End and Hide).

import { useState } from "preact/hooks";
import type { App } from "../app.js";
import type { SessionState } from "../model.js";
import { showControls } from "../shown.js";
import { sideName } from "../present.js";
import { Badge, displayName } from "./sessionlabel.js";
import { TranscriptView } from "./transcript.js";
import { Composer, ReadOnlyNote } from "./composer.js";

export function GoalPanel({ app, st }: { app: App; st: SessionState }) {
  const [objective, setObjective] = useState("");
  const provider = app.providers.find((p) => p.id === st.session.provider);
  const g = st.goal;
  const unsupported = provider && !provider.capabilities.goals;
  const turns = st.autoTurns;
  const closed = st.status === "completed";
  const operate = app.may("operator");
  return (
    <section class="panel goal-panel" data-testid="goal-panel" aria-labelledby="goal-h">
      <h2 id="goal-h">Goal</h2>
      {unsupported ? <p class="dim">{showControls(provider.displayName)} does not pursue goals.</p> : null}
      <div class="goal-state">
        <span class={`badge goal-${g?.status ?? "none"}`} data-testid="goal-status" data-status={g?.status ?? "none"}>
          {g ? g.status : "no goal"}
        </span>
        {g ? <span class="goal-objective-text">{showControls(g.objective)}</span> : null}
      </div>
      {g && (g.tokensUsed != null || g.tokenBudget != null) ? (
        <div class="dim">
          tokens used {g.tokensUsed ?? 0}
          {g.tokenBudget != null ? ` of ${g.tokenBudget}` : ""}
        </div>
      ) : null}
      {operate && !closed && !unsupported ? (
        <>
          <form
            class="row"
            onSubmit={async (ev) => {
              ev.preventDefault();
              if (!objective.trim()) return;
              if (await app.setGoal(st.id, objective.trim())) setObjective("");
            }}
          >
            <label class="grow">
              <span class="sr-only">Objective</span>
              <input data-testid="goal-objective" placeholder={g ? "new objective" : "objective"} value={objective} onInput={(e) => setObjective((e.currentTarget as HTMLInputElement).value)} autoComplete="off" />
            </label>
            <button type="submit" data-testid="goal-set" disabled={!objective.trim()}>
              Set
            </button>
          </form>
          <div class="row">
            <button type="button" data-testid="goal-pause" disabled={g?.status !== "active"} onClick={() => void app.pauseGoal(st.id)}>
              Pause
            </button>
            <button type="button" data-testid="goal-resume" disabled={g?.status !== "paused"} onClick={() => void app.resumeGoal(st.id)}>
              Resume
            </button>
            <button type="button" data-testid="goal-clear" disabled={!g} onClick={() => void app.clearGoal(st.id)}>
              Clear
            </button>
          </div>
        </>
      ) : null}
      {turns.length ? (
        <div class="goal-turns">
          <h3>Turns the agent started</h3>
          <ul class="list" data-testid="goal-turns">
            {turns.map((t, i) => {
              const n = turns.slice(0, i + 1).filter((x) => x.origin === t.origin).length;
              return (
                <li data-origin={t.origin} data-testid="goal-turn" data-turn={t.turnId}>
                  <span class="turn-name" title={`turn ${t.turnId}`} data-testid="goal-turn-name">
                    {t.origin === "goal_continuation" ? `continuation ${n}` : `agent turn ${n}`}
                  </span>{" "}
                  <span class="dim">
                    {t.origin === "goal_continuation" ? (t.goalOperationId === g?.operationId ? "· goal continuation (current goal)" : "· goal continuation (an earlier goal)") : "· started by the agent, not credited to a goal"}
                  </span>
                </li>
              );
            })}
          </ul>
        </div>
      ) : null}
    </section>
  );
}

export function SidePanel({ app, st }: { app: App; st: SessionState }) {
  const ended = st.status === "completed";
  const room = app.room();
  const source = st.session.sourceSessionId ? room?.session(st.session.sourceSessionId) : undefined;
  return (
    <section class="panel side-panel" data-testid="side-panel" data-session={st.id} aria-labelledby="side-h">
      <div class="row spread">
        <h2 id="side-h" data-testid="side-title" title={st.id}>
          {room ? sideName(room, st) : "Side conversation"}
        </h2>
        <Badge status={st.status} canAnswer={app.may("approver")} />
      </div>
      <div class="dim">
        On the side of {source ? displayName(source) : st.session.sourceSessionId}; not part of its history
      </div>
      <TranscriptView app={app} st={st} label="Side conversation transcript" />
      {!ended && !app.may("operator") ? (
        <ReadOnlyNote app={app} />
      ) : !ended ? (
        <>
          <Composer app={app} st={st} steerable={false} queueable={false} />
          <div class="row">
            <button type="button" data-testid="close-side" onClick={() => void app.close(st.id)}>
              End side conversation
            </button>
          </div>
        </>
      ) : (
        <p class="dim">This side conversation has ended.</p>
      )}
      <button type="button" class="link" data-testid="hide-side" onClick={() => app.selectSide(null)}>
        Hide
      </button>
    </section>
  );
}
