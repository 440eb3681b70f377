//! The turn runner: a user turn or a goal continuation, streamed chunk by chunk, obeying cancel and
//! steer; afterwards the agent may continue its goal by itself.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use ensemble_core::adapter::{EventSink, Fact};
use ensemble_core::event::{
    CallCompletedPayload, CallKind, CallStartedPayload, CallStatus, CallUpdatedPayload, Decision, ErrorInfo, EventBody,
    FileChange, InteractionKind, InteractionRequestedPayload, NoticeLevel, NoticePayload, PlanStep, PlanUpdatedPayload,
    Question, TextCompletedPayload, TextDeltaPayload, TurnCanceledPayload, TurnCompletedPayload, TurnFailedPayload,
    UsagePayload,
};
use ensemble_core::goal::{GoalFact, ProviderGoal};
use ensemble_core::usage::Cost;
use futures::FutureExt;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::config::ScriptedConfig;
use super::directives::{Directive, FileOp, goal_steps, parse};
use super::live::{Answer, Live, RunningTurn};
use super::modes::Voice;
use super::transcript::Spent;

/// What a turn does.
pub(super) enum Body {
    /// The text, the voice, and what else came with the text (images, files), described.
    User(String, Voice, Vec<String>),
    /// A turn the agent starts by itself to pursue its goal.
    Continuation { provider_turn: String, goal: ProviderGoal, step: u64, steps: u64 },
}

/// Runs a turn in the background; afterwards the agent may continue its goal.
pub(super) fn spawn_turn(
    live: Arc<Live>,
    turn_id: String,
    body: Body,
    cancel: CancellationToken,
    config: ScriptedConfig,
) {
    tokio::spawn(async move {
        let sink = live.handle.sink.clone();
        let voice = match &body {
            Body::User(_, voice, _) => *voice,
            Body::Continuation { .. } => Voice::default(),
        };
        let run = TurnRun { live: live.clone(), turn_id: turn_id.clone(), cancel, delay: config.chunk_delay, voice };
        let outcome = match body {
            Body::User(text, _, received) => AssertUnwindSafe(run.run(text, received)).catch_unwind().await,
            Body::Continuation { provider_turn, goal, step, steps } => {
                // Boxed: the task is as large as its largest state (see `script`).
                AssertUnwindSafe(Box::pin(run.continuation(provider_turn, goal, step, steps))).catch_unwind().await
            }
        };
        // The turn slot is ours to clear. If it is gone, the session was closed, disconnected or
        // replaced under the turn: like a killed process, the agent says nothing more (the
        // controller ends the turn).
        let stopped = {
            let mut slot = live.turn();
            let ours = slot.as_ref().is_some_and(|t| t.turn_id == turn_id);
            if ours {
                *slot = None;
            }
            !ours
        };
        match outcome {
            Ok(Some(_)) if stopped => {}
            Ok(Some(end)) => {
                Box::pin(sink.emit(Some(&turn_id), end)).await;
                maybe_continue(live);
            }
            Ok(None) => {}
            Err(_) => {
                tracing::error!(session = %sink.key(), turn = %turn_id, "scripted turn task panicked");
                Box::pin(sink.lost("the scripted agent crashed (its turn task panicked)")).await;
            }
        }
    });
}

/// If the agent's goal is active and has steps left, it starts a continuation turn by itself.
pub(super) fn maybe_continue(live: Arc<Live>) {
    let Some(goal) = live.goal().clone().filter(ProviderGoal::is_active) else { return };
    let steps = goal_steps(&goal.objective);
    let step = live.goal_steps.load(Ordering::SeqCst) + 1;
    if step > steps {
        return;
    }
    let cancel = CancellationToken::new();
    let turn_id = ensemble_core::clock::new_id();
    {
        let mut slot = live.turn();
        if slot.is_some() {
            return;
        }
        *slot = Some(RunningTurn {
            turn_id: turn_id.clone(),
            cancel: cancel.clone(),
            pending: HashMap::new(),
            steered: Vec::new(),
        });
    }
    live.goal_steps.store(step, Ordering::SeqCst);
    let provider_turn = format!("{}-turn-{}", live.thread, live.turn_seq.fetch_add(1, Ordering::Relaxed) + 1);
    let config = live.config.clone();
    spawn_turn(live, turn_id, Body::Continuation { provider_turn, goal, step, steps }, cancel, config);
}

pub(super) fn notice(message: &str) -> EventBody {
    EventBody::Notice(NoticePayload { level: NoticeLevel::Info, message: message.to_owned() })
}

/// Why a turn stopped early.
pub(super) enum Stop {
    Canceled,
    Declined,
    /// The turn's end was already reported (a failure, or the "process" died).
    Reported,
}

pub(super) struct TurnRun {
    pub(super) live: Arc<Live>,
    pub(super) turn_id: String,
    pub(super) cancel: CancellationToken,
    pub(super) delay: Duration,
    /// How the agent writes its replies (the session's mode and options).
    pub(super) voice: Voice,
}

impl TurnRun {
    pub(super) fn sink(&self) -> &EventSink {
        &self.live.handle.sink
    }

    pub(super) async fn emit(&self, body: EventBody) {
        self.sink().emit(Some(&self.turn_id), body).await;
    }

    /// Steering input given since the last call (kept in the turn's slot: a channel per turn cost
    /// 1.6 KB for every running turn, and nothing waits on steers).
    fn take_steered(&self) -> Vec<String> {
        match self.live.turn().as_mut() {
            Some(t) if t.turn_id == self.turn_id => std::mem::take(&mut t.steered),
            _ => Vec::new(),
        }
    }

    /// Waits `d`, or stops when the turn is canceled.
    pub(super) async fn pause(&self, d: Duration) -> Result<(), Stop> {
        if d.is_zero() {
            tokio::task::yield_now().await;
            return if self.cancel.is_cancelled() { Err(Stop::Canceled) } else { Ok(()) };
        }
        tokio::select! {
            _ = self.cancel.cancelled() => Err(Stop::Canceled),
            _ = tokio::time::sleep(d) => Ok(()),
        }
    }

    /// Runs the turn; returns its terminal event (None if the sink was already told it ended).
    pub(super) async fn run(mut self, input: String, received: Vec<String>) -> Option<EventBody> {
        let mut directives: Vec<Directive> = received.into_iter().map(Directive::Received).collect();
        directives.extend(parse(&input));
        let mut reply = String::new();
        let result = self.script(&directives, &mut reply).await;
        let turn_id = self.turn_id.clone();
        match result {
            Ok(()) => {
                let usage = Box::pin(self.record(&input, &reply)).await;
                Box::pin(self.emit(EventBody::UsageUpdated(usage))).await;
                Some(EventBody::TurnCompleted(TurnCompletedPayload { turn_id }))
            }
            Err(Stop::Canceled) => {
                Some(EventBody::TurnCanceled(TurnCanceledPayload { turn_id, reason: "interrupted".into() }))
            }
            Err(Stop::Declined) => {
                Some(EventBody::TurnCanceled(TurnCanceledPayload { turn_id, reason: "declined".into() }))
            }
            Err(Stop::Reported) => None,
        }
    }

    /// A turn the agent started by itself to pursue its goal.
    pub(super) async fn continuation(
        mut self,
        provider_turn: String,
        goal: ProviderGoal,
        step: u64,
        steps: u64,
    ) -> Option<EventBody> {
        let live = self.live.clone();
        // The step is counted durably before it runs: a restart continues from the next one.
        live.save_goal().await;
        if !goal.objective.contains("noevidence") {
            // A turn-scoped progress update: exact evidence of the goal this turn serves.
            let progress =
                live.update_goal_of(Some(&goal), |g| g.tokens_used = Some(g.tokens_used.unwrap_or(0) + 10)).await;
            if let Some(p) = progress {
                live.goals().observed(p, Some(&provider_turn)).await;
            }
        }
        let attributed = live.goals().attribute(&provider_turn, live.config.goal_grace).await;
        let turn_id = self.turn_id.clone();
        let started = ensemble_core::goal::provider_turn_started(&turn_id, attributed.as_ref());
        self.emit(EventBody::TurnStarted(started)).await;
        if attributed.is_none() {
            let fact = GoalFact::ReconcileRequired {
                reason: "unproven_continuation".into(),
                provider_turn_id: Some(provider_turn.clone()),
            };
            self.sink().send(vec![Fact::Goal(fact)]).await;
        }
        let mut reply = String::new();
        let text = format!("Working toward the goal: {} (step {step} of {steps})", goal.objective);
        if let Err(stop) = self.stream_message(&text, &mut reply).await {
            return match stop {
                Stop::Canceled | Stop::Declined => {
                    Some(EventBody::TurnCanceled(TurnCanceledPayload { turn_id, reason: "interrupted".into() }))
                }
                Stop::Reported => None,
            };
        }
        if step >= steps
            && let Some(done) = live.update_goal_of(Some(&goal), |g| g.status = "complete".into()).await
        {
            live.goals().observed(done, Some(&provider_turn)).await;
        }
        Some(EventBody::TurnCompleted(TurnCompletedPayload { turn_id }))
    }

    /// Keeps the turn in the transcript and counts its words as tokens; returns the session's
    /// cumulative usage.
    pub(super) async fn record(&self, input: &str, reply: &str) -> UsagePayload {
        let (inp, out) = (input.split_whitespace().count() as i64, reply.split_whitespace().count() as i64);
        let mut t = self.live.transcript.lock().await;
        t.push(&self.turn_id, input, reply);
        t.spent.input_tokens += inp;
        t.spent.output_tokens += out;
        if !self.live.ephemeral {
            t.save(&self.live.handle.state).await;
        }
        usage(&t.spent, Some(inp + out))
    }

    /// `/spend`: more tokens (and cost) now, reported at once.
    async fn spend(&self, tokens: i64, cost: Option<f64>) {
        let usage = {
            let mut t = self.live.transcript.lock().await;
            t.spent.output_tokens = t.spent.output_tokens.saturating_add(tokens);
            if let Some(c) = cost {
                t.spent.cost = Some(t.spent.cost.unwrap_or(0.0) + c);
            }
            if !self.live.ephemeral {
                t.save(&self.live.handle.state).await;
            }
            usage(&t.spent, None)
        };
        self.emit(EventBody::UsageUpdated(usage)).await;
    }

    /// Every directive's work but `/hang` is boxed: a turn may spend most of its life waiting
    /// (for a cancel, an answer), and a future is as large as its largest state. With the
    /// continuation boxed too, the server's memory per waiting `/hang` turn fell from 3.6 to
    /// 2.0 KB.
    pub(super) async fn script(&mut self, directives: &[Directive], reply: &mut String) -> Result<(), Stop> {
        let mut said = Vec::new();
        for d in directives {
            match d {
                // Unboxed: a waiting `/hang` turn keeps only this small state.
                Directive::Hang => self.hang().await?,
                d => Box::pin(self.directive(d, &mut said, reply)).await?,
            }
        }
        if said.is_empty() && reply.is_empty() {
            said.push("Done.".into());
        }
        if !said.is_empty() {
            Box::pin(self.stream_message(&said.join("\n"), reply)).await?;
        }
        Ok(())
    }

    /// Waits for the turn's cancel (`/hang`).
    async fn hang(&self) -> Result<(), Stop> {
        self.cancel.cancelled().await;
        Err(Stop::Canceled)
    }

    /// One directive's work; what it says goes to `said`, streamed as one message at the end.
    async fn directive(&mut self, d: &Directive, said: &mut Vec<String>, reply: &mut String) -> Result<(), Stop> {
        match d {
            Directive::Slow(ms) => self.delay = Duration::from_millis(*ms),
            Directive::Say(text) => said.push(self.voice.say(format!("You said: {text}"))),
            Directive::Received(what) => said.push(format!("You sent {what}.")),
            Directive::Tool { name, args } => self.tool(name, args).await?,
            Directive::File { op, path, text } => self.file(*op, path, text).await?,
            Directive::Run(cmd) => {
                let line = self.run_command(cmd).await?;
                said.push(line);
            }
            Directive::Ask(q) => {
                let line = self.ask(q).await?;
                said.push(line);
            }
            Directive::Chunks(n) => {
                let text: String = (1..=*n).map(|i| format!("chunk {i} ")).collect();
                self.stream_message(text.trim_end(), reply).await?;
            }
            Directive::Reason(text) => self.stream_reasoning(text).await?,
            Directive::Plan(steps) => {
                self.emit(EventBody::PlanUpdated(PlanUpdatedPayload {
                    explanation: None,
                    steps: steps.iter().map(|s| PlanStep { step: s.clone(), status: "pending".into() }).collect(),
                }))
                .await;
            }
            Directive::Fail(message) => {
                let turn_id = self.turn_id.clone();
                self.emit(EventBody::TurnFailed(TurnFailedPayload {
                    turn_id,
                    error: ErrorInfo::new("scripted_failure", message.clone()),
                }))
                .await;
                return Err(Stop::Reported);
            }
            Directive::History => {
                let t = self.live.transcript.lock().await;
                if t.turns.is_empty() {
                    said.push("No earlier turns.".into());
                } else {
                    for (i, turn) in t.turns.iter().enumerate() {
                        let mark = if i < self.live.inherited { " (inherited)" } else { "" };
                        said.push(format!("{}. {}{mark}", i + 1, turn.input.replace('\n', " ")));
                    }
                }
            }
            Directive::Goal(objective) => {
                let now = self.live.goal_time();
                let goal = ProviderGoal {
                    thread_id: self.live.thread.clone(),
                    objective: objective.clone(),
                    status: "active".into(),
                    token_budget: None,
                    tokens_used: Some(0),
                    created_at: now,
                    updated_at: now,
                };
                *self.live.goal() = Some(goal.clone());
                self.live.goal_steps.store(0, Ordering::SeqCst);
                self.live.save_goal().await;
                // Reported like codex's create_goal: turn-scoped, then adopted by the host.
                self.live.goals().observed(goal, Some(&self.turn_id)).await;
                said.push(format!("I set myself a goal: {objective}"));
            }
            Directive::Progress => {
                let progress = self.live.update_goal(|g| g.tokens_used = Some(g.tokens_used.unwrap_or(0) + 10)).await;
                match progress {
                    Some(p) => {
                        self.live.goals().observed(p, Some(&self.turn_id)).await;
                        said.push("I made progress on the goal.".into());
                    }
                    None => said.push("I have no goal.".into()),
                }
            }
            Directive::Spend { tokens, cost } => self.spend(*tokens, *cost).await,
            Directive::Hang => self.hang().await?,
            Directive::Exit => {
                self.sink().lost("the scripted agent exited mid-turn").await;
                return Err(Stop::Reported);
            }
            Directive::Panic => panic_now(),
            Directive::Unknown(line) => said.push(format!("Unknown directive: {line}")),
        }
        Ok(())
    }

    /// Streams one agent message word by word; steering input received meanwhile is appended.
    pub(super) async fn stream_message(&mut self, text: &str, reply: &mut String) -> Result<(), Stop> {
        let item_id = self.live.next_id("msg");
        let mut sent = String::new();
        let mut words: Vec<String> = split_words(text);
        let mut i = 0;
        while i < words.len() {
            for extra in self.take_steered() {
                words.extend(split_words(&format!(" (steered: {})", extra.replace('\n', " "))));
            }
            if let Err(stop) = self.pause(self.delay).await {
                // Close the item the interrupted stream leaves open.
                self.emit(EventBody::MessageCompleted(TextCompletedPayload { item_id, text: sent })).await;
                return Err(stop);
            }
            sent.push_str(&words[i]);
            self.emit(EventBody::MessageDelta(TextDeltaPayload { item_id: item_id.clone(), text: words[i].clone() }))
                .await;
            i += 1;
        }
        self.emit(EventBody::MessageCompleted(TextCompletedPayload { item_id, text: sent.clone() })).await;
        if !reply.is_empty() {
            reply.push('\n');
        }
        reply.push_str(&sent);
        Ok(())
    }

    pub(super) async fn stream_reasoning(&self, text: &str) -> Result<(), Stop> {
        let item_id = self.live.next_id("reasoning");
        let mut sent = String::new();
        for w in split_words(text) {
            self.pause(self.delay).await?;
            sent.push_str(&w);
            self.emit(EventBody::ReasoningDelta(TextDeltaPayload { item_id: item_id.clone(), text: w })).await;
        }
        self.emit(EventBody::ReasoningCompleted(TextCompletedPayload { item_id, text: sent })).await;
        Ok(())
    }

    pub(super) async fn tool(&self, name: &str, args: &str) -> Result<(), Stop> {
        let call_id = self.live.next_id("call");
        self.emit(EventBody::CallStarted(CallStartedPayload {
            call_id: call_id.clone(),
            kind: CallKind::Tool,
            name: name.to_owned(),
            command: None,
            cwd: None,
            input: Some(serde_json::json!({ "args": args })),
            changes: vec![],
        }))
        .await;
        self.pause(self.delay).await?;
        self.emit(EventBody::CallCompleted(CallCompletedPayload {
            call_id,
            status: CallStatus::Completed,
            output: Some(format!("{name}: ok")),
            exit_code: None,
            changes: vec![],
        }))
        .await;
        Ok(())
    }

    /// A file directive, done for real beneath the session's cwd (no link followed, nothing
    /// outside): `call.started`, then `call.completed` with the diff, or `failed` with the reason.
    pub(super) async fn file(&self, op: FileOp, path: &str, text: &str) -> Result<(), Stop> {
        let call_id = self.live.next_id("call");
        let name = match op {
            FileOp::Edit => "edit",
            FileOp::Write => "write",
            FileOp::Delete => "delete",
        };
        self.emit(EventBody::CallStarted(CallStartedPayload {
            call_id: call_id.clone(),
            kind: CallKind::FileChange,
            name: name.into(),
            command: None,
            cwd: Some(self.live.cwd.clone()),
            input: Some(serde_json::json!({ "path": path })),
            changes: Vec::new(),
        }))
        .await;
        self.pause(self.delay).await?;
        let (status, output, changes) = match change_file(&self.live.cwd, &self.live.config.guard, op, path, text) {
            Ok(change) => (CallStatus::Completed, None, vec![change]),
            Err(e) => (CallStatus::Failed, Some(format!("{name} {path}: {e}")), Vec::new()),
        };
        self.emit(EventBody::CallCompleted(CallCompletedPayload { call_id, status, output, exit_code: None, changes }))
            .await;
        Ok(())
    }

    /// Registers a pending request and waits for its answer (or the turn's end).
    pub(super) async fn request(&self, payload: InteractionRequestedPayload) -> Result<Answer, Stop> {
        let (tx, rx) = oneshot::channel();
        {
            let mut slot = self.live.turn();
            let Some(turn) = slot.as_mut().filter(|t| t.turn_id == self.turn_id) else {
                return Err(Stop::Canceled);
            };
            turn.pending.insert(payload.request_id.clone(), tx);
        }
        self.emit(EventBody::InteractionRequested(payload)).await;
        tokio::select! {
            _ = self.cancel.cancelled() => Err(Stop::Canceled),
            answer = rx => answer.map_err(|_| Stop::Canceled),
        }
    }

    pub(super) async fn run_command(&self, cmd: &str) -> Result<String, Stop> {
        let call_id = self.live.next_id("call");
        if !self.live.approved_for_session.load(Ordering::Relaxed) {
            let (decision, _) = self
                .request(InteractionRequestedPayload {
                    request_id: self.live.next_id("approval"),
                    kind: InteractionKind::CommandApproval,
                    title: format!("Run `{cmd}`?"),
                    detail: Some("The scripted agent wants to run a command.".into()),
                    command: Some(cmd.to_owned()),
                    cwd: Some(self.live.cwd.clone()),
                    diff: None,
                    questions: vec![],
                    options: vec![Decision::Accept, Decision::AcceptForSession, Decision::Decline, Decision::Cancel],
                    call_id: Some(call_id.clone()),
                    agent_options: vec![],
                })
                .await?;
            match decision {
                Decision::Accept => {}
                Decision::AcceptForSession => self.live.approved_for_session.store(true, Ordering::Relaxed),
                Decision::Decline => return Ok(format!("The command `{cmd}` was declined.")),
                Decision::Cancel => return Err(Stop::Declined),
            }
        }
        self.emit(EventBody::CallStarted(CallStartedPayload {
            call_id: call_id.clone(),
            kind: CallKind::Command,
            name: "shell".into(),
            command: Some(cmd.to_owned()),
            cwd: Some(self.live.cwd.clone()),
            input: None,
            changes: vec![],
        }))
        .await;
        let ran = super::run::execute(&self.live, cmd, &self.cancel).await;
        if !ran.output.is_empty() {
            self.emit(EventBody::CallUpdated(CallUpdatedPayload {
                call_id: call_id.clone(),
                output_delta: Some(ran.output.clone()),
                status: None,
            }))
            .await;
        }
        // Its exit code is the call's; what the agent says is the same for any that finished.
        let said = match ran.exit_code {
            Some(_) => format!("The command `{cmd}` ran."),
            None => format!("The command `{cmd}` did not finish."),
        };
        self.emit(EventBody::CallCompleted(CallCompletedPayload {
            call_id,
            status: ran.status,
            output: Some(ran.output),
            exit_code: ran.exit_code,
            changes: vec![],
        }))
        .await;
        if self.cancel.is_cancelled() {
            return Err(Stop::Canceled);
        }
        Ok(said)
    }

    pub(super) async fn ask(&self, question: &str) -> Result<String, Stop> {
        let (decision, answers) = self
            .request(InteractionRequestedPayload {
                request_id: self.live.next_id("question"),
                kind: InteractionKind::UserInput,
                title: question.to_owned(),
                detail: None,
                command: None,
                cwd: None,
                diff: None,
                questions: vec![Question {
                    id: "answer".into(),
                    header: None,
                    question: question.to_owned(),
                    options: vec![],
                    is_other: true,
                    is_secret: false,
                }],
                options: vec![Decision::Accept, Decision::Decline, Decision::Cancel],
                call_id: None,
                agent_options: vec![],
            })
            .await?;
        match decision {
            Decision::Cancel => Err(Stop::Declined),
            Decision::Decline => Ok("The question was declined.".into()),
            Decision::Accept | Decision::AcceptForSession => {
                Ok(format!("You answered: {}", answer_text(answers.as_ref())))
            }
        }
    }
}

/// Reads `{"answer": "text"}` or codex's `{"answer": {"answers": ["text"]}}`.
pub(super) fn answer_text(answers: Option<&Value>) -> String {
    let Some(v) = answers.and_then(|a| a.get("answer")) else {
        return String::new();
    };
    match v {
        Value::String(s) => s.clone(),
        other => other
            .get("answers")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", "))
            .unwrap_or_default(),
    }
}

#[expect(clippy::panic, reason = "the /panic directive exists to exercise crash containment")]
pub(super) fn panic_now() -> ! {
    panic!("the /panic directive")
}

/// Splits text into words that keep their following whitespace, so the deltas concatenate back.
pub(super) fn split_words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for ch in text.chars() {
        cur.push(ch);
        if ch.is_whitespace() {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Largest file a scripted edit reads back (to append to it, and for its diff).
const MAX_EDIT_BYTES: u64 = 1 << 20;

/// Changes one file beneath `cwd`; the change with a unified diff of it.
fn change_file(
    cwd: &str,
    guard: &ensemble_files::Guard,
    op: FileOp,
    path: &str,
    text: &str,
) -> Result<FileChange, ensemble_files::FileError> {
    let root = ensemble_files::Root::open(std::path::Path::new(cwd), guard.clone())?;
    let full = std::path::Path::new(cwd).join(path);
    let before = match root.read(&full, MAX_EDIT_BYTES) {
        Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        Err(ensemble_files::FileError::NotFound) => None,
        Err(e) => return Err(e),
    };
    let new_lines: String = text.split("\\n").map(|l| format!("{l}\n")).collect();
    let after = match op {
        FileOp::Delete => {
            root.remove(&full)?;
            None
        }
        FileOp::Write => Some(new_lines),
        FileOp::Edit => Some(format!("{}{new_lines}", before.as_deref().unwrap_or(""))),
    };
    if let Some(content) = &after {
        if let Some(dir) = full.parent().filter(|_| before.is_none()) {
            root.create_dir_all(dir)?;
        }
        root.write(&full, content.as_bytes())?;
    }
    let kind = match (&before, &after) {
        (None, _) => "add",
        (Some(_), None) => "delete",
        (Some(_), Some(_)) => "update",
    };
    Ok(FileChange {
        path: path.to_owned(),
        kind: kind.into(),
        diff: Some(unified(path, before.as_deref(), after.as_deref())),
    })
}

/// The minimal unified diff of the change (three lines of context), as git shows it: a call's
/// diff and the turn's changes agree.
fn unified(path: &str, before: Option<&str>, after: Option<&str>) -> String {
    let from = if before.is_some() { format!("a/{path}") } else { "/dev/null".to_owned() };
    let to = if after.is_some() { format!("b/{path}") } else { "/dev/null".to_owned() };
    similar::TextDiff::from_lines(before.unwrap_or(""), after.unwrap_or(""))
        .unified_diff()
        .context_radius(3)
        .header(&from, &to)
        .to_string()
}

fn usage(spent: &Spent, last_turn: Option<i64>) -> UsagePayload {
    UsagePayload {
        input_tokens: spent.input_tokens,
        output_tokens: spent.output_tokens,
        total_tokens: spent.input_tokens.saturating_add(spent.output_tokens),
        last_turn_total_tokens: last_turn,
        cost: spent.cost.map(|amount| Cost { amount, currency: "USD".into() }),
        ..Default::default()
    }
}
