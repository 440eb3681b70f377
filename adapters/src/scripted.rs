//! The built-in `scripted` provider: a real in-process agent with deterministic behaviour, so the
//! server does real work with nothing installed and every runtime path is testable without codex.
//!
//! A turn's input is read line by line. Lines starting with `/` are directives (see [`Directive`]
//! and the README); other lines are text the agent echoes back. The reply is streamed word by word
//! as `message.delta`s with a configurable delay, so cancel and reconnect can happen mid-stream.
//! The conversation is kept in the store (provider state), so `/history` works after a restart.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::kit::goals::GoalEngine;
use crate::kit::provider::{Provider, ProviderEnv, ProviderError};
use async_trait::async_trait;
use ensemble_runtime::adapter::{
    Adapter, AdapterError, Capabilities, EventSink, Fact, ProviderDescriptor, SessionHandle, SideOpen, SideOpened,
    StartOutcome, TurnRequest,
};
use ensemble_runtime::event::{
    CallCompletedPayload, CallKind, CallStartedPayload, CallStatus, CallUpdatedPayload, CommandInfo,
    CommandsUpdatedPayload, Decision, ErrorInfo, EventBody, InteractionKind, InteractionRequestedPayload, NoticeLevel,
    NoticePayload, PlanStep, PlanUpdatedPayload, Question, TextCompletedPayload, TextDeltaPayload, TurnCanceledPayload,
    TurnCompletedPayload, TurnFailedPayload, UsagePayload,
};
use ensemble_runtime::goal::{GoalAction, GoalCommand, GoalFact, ProviderGoal};
use ensemble_runtime::model::{InputItem, Session, SessionKey, SideCapabilities};
use futures::FutureExt;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// The provider id.
pub const SCRIPTED: &str = "scripted";
/// How many turns of the transcript are kept.
const TRANSCRIPT_TURNS: usize = 200;
const TRANSCRIPT_KEY: &str = "transcript";
const GOAL_KEY: &str = "goal";
/// Most continuation turns one goal may ask for.
const MAX_GOAL_STEPS: u64 = 20;

#[derive(Clone, Debug)]
pub struct ScriptedConfig {
    /// The provider id (`scripted`; test variants use others).
    pub id: String,
    /// Pause between two streamed chunks (overridable per turn with `/slow MS`).
    pub chunk_delay: Duration,
    /// How side conversations behave (test variants break them on purpose).
    pub side: SideBehavior,
    /// How long a goal continuation waits for evidence of the operation it belongs to.
    pub goal_grace: Duration,
}

impl Default for ScriptedConfig {
    fn default() -> Self {
        Self {
            id: SCRIPTED.to_owned(),
            chunk_delay: Duration::from_millis(20),
            side: SideBehavior::Full,
            goal_grace: Duration::from_millis(250),
        }
    }
}

/// How the scripted provider opens side conversations. Everything but `Full` exists to test the
/// controller's refusal and rollback paths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SideBehavior {
    /// All five capabilities; sides fork the live transcript.
    Full,
    /// Reports every capability but the model boundary.
    NoBoundary,
    /// The open fails at the provider.
    Fail,
    /// The open returns the *source's* identity instead of the side's.
    SourceIdentity,
    /// The open returns the side's identity without a provider session id.
    NoProviderId,
}

impl ScriptedConfig {
    /// The test variants `--test-providers` registers, by provider id.
    pub fn test_variants(chunk_delay: Duration) -> Vec<ScriptedConfig> {
        [
            ("scripted-side-limited", SideBehavior::NoBoundary),
            ("scripted-side-fail", SideBehavior::Fail),
            ("scripted-side-source-id", SideBehavior::SourceIdentity),
            ("scripted-side-no-thread", SideBehavior::NoProviderId),
        ]
        .into_iter()
        .map(|(id, side)| ScriptedConfig { id: id.to_owned(), chunk_delay, side, ..ScriptedConfig::default() })
        .collect()
    }
}

/// The scripted provider's registration.
pub struct Scripted;

/// The scripted provider's options.
#[derive(Clone, Debug, clap::Args)]
pub struct ScriptedOptions {
    /// Pause between two chunks the scripted provider streams.
    #[arg(long, env = "ENSEMBLE_SCRIPTED_CHUNK_DELAY_MS", default_value_t = 20)]
    pub scripted_chunk_delay_ms: u64,
}

#[async_trait]
impl Provider for Scripted {
    type Options = ScriptedOptions;

    async fn build(options: &ScriptedOptions, env: &ProviderEnv) -> Result<Vec<Arc<dyn Adapter>>, ProviderError> {
        let config = ScriptedConfig {
            chunk_delay: Duration::from_millis(options.scripted_chunk_delay_ms),
            goal_grace: env.goal_grace,
            ..ScriptedConfig::default()
        };
        Ok(vec![Arc::new(ScriptedAdapter::new(config))])
    }
}

/// The scripted provider's test variants (broken side conversations), registered like any
/// provider but only when asked for.
pub struct ScriptedTestVariants;

/// Options of [`ScriptedTestVariants`].
#[derive(Clone, Debug, clap::Args)]
pub struct TestVariantOptions {
    /// Also register the scripted provider's test variants (broken side conversations, for tests).
    #[arg(long, env = "ENSEMBLE_TEST_PROVIDERS", hide = true)]
    pub test_providers: bool,
}

#[async_trait]
impl Provider for ScriptedTestVariants {
    type Options = TestVariantOptions;

    async fn build(options: &TestVariantOptions, env: &ProviderEnv) -> Result<Vec<Arc<dyn Adapter>>, ProviderError> {
        if !options.test_providers {
            return Ok(Vec::new());
        }
        let base = ScriptedConfig { goal_grace: env.goal_grace, ..ScriptedConfig::default() };
        Ok(ScriptedConfig::test_variants(base.chunk_delay)
            .into_iter()
            .map(|c| {
                Arc::new(ScriptedAdapter::new(ScriptedConfig { goal_grace: base.goal_grace, ..c })) as Arc<dyn Adapter>
            })
            .collect())
    }
}

/// One line of scripted input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Directive {
    /// Plain text: echoed back.
    Say(String),
    /// `/tool NAME [ARGS]`: a simulated tool call.
    Tool { name: String, args: String },
    /// `/run COMMAND`: asks for approval, then "runs" the command.
    Run(String),
    /// `/ask QUESTION`: asks the user a question.
    Ask(String),
    /// `/slow MS`: delay between chunks for this turn.
    Slow(u64),
    /// `/chunks N`: stream N numbered chunks.
    Chunks(u64),
    /// `/reason TEXT`: reasoning before the reply.
    Reason(String),
    /// `/plan A; B; C`: a plan update.
    Plan(Vec<String>),
    /// `/fail [MESSAGE]`: the turn fails.
    Fail(String),
    /// `/history`: lists the earlier inputs of this session.
    History,
    /// `/goal OBJECTIVE`: the agent creates a goal by itself (as codex's `create_goal`).
    Goal(String),
    /// `/progress`: the agent reports progress on its goal (in this turn).
    Progress,
    /// `/hang`: nothing more happens until the turn is canceled.
    Hang,
    /// `/exit`: the agent "process" dies mid-turn.
    Exit,
    /// `/panic`: the agent's turn task panics.
    Panic,
    /// An unknown directive (reported in the reply).
    Unknown(String),
}

/// Parses a turn's input into directives, one per line.
pub fn parse(input: &str) -> Vec<Directive> {
    let mut out = Vec::new();
    for line in input.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let Some(rest) = line.strip_prefix('/') else {
            out.push(Directive::Say(line.to_owned()));
            continue;
        };
        let (cmd, arg) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let arg = arg.trim().to_owned();
        let d = match cmd {
            "tool" => {
                let (name, args) = arg.split_once(char::is_whitespace).unwrap_or((&arg, ""));
                Directive::Tool {
                    name: if name.is_empty() { "echo".into() } else { name.to_owned() },
                    args: args.trim().to_owned(),
                }
            }
            "run" if !arg.is_empty() => Directive::Run(arg),
            "ask" if !arg.is_empty() => Directive::Ask(arg),
            "slow" => arg.parse().map(Directive::Slow).unwrap_or(Directive::Unknown(line.to_owned())),
            "chunks" => arg.parse().map(Directive::Chunks).unwrap_or(Directive::Unknown(line.to_owned())),
            "reason" => Directive::Reason(if arg.is_empty() { "Thinking it over.".into() } else { arg }),
            "plan" => Directive::Plan(arg.split(';').map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect()),
            "fail" => Directive::Fail(if arg.is_empty() { "scripted failure".into() } else { arg }),
            "history" => Directive::History,
            "goal" if !arg.is_empty() => Directive::Goal(arg),
            "progress" => Directive::Progress,
            "hang" => Directive::Hang,
            "exit" => Directive::Exit,
            "panic" => Directive::Panic,
            _ => Directive::Unknown(line.to_owned()),
        };
        out.push(d);
    }
    out
}

/// The commands the scripted agent advertises (`commands.updated`).
pub fn commands() -> Vec<CommandInfo> {
    let c = |name: &str, description: &str, hint: Option<&str>| CommandInfo {
        name: name.into(),
        description: description.into(),
        input_hint: hint.map(Into::into),
    };
    vec![
        c("tool", "simulate a tool call", Some("NAME [ARGS]")),
        c("run", "ask for approval, then run a command (simulated)", Some("COMMAND")),
        c("ask", "ask the user a question", Some("QUESTION")),
        c("slow", "milliseconds between streamed chunks for this turn", Some("MS")),
        c("chunks", "stream N numbered chunks", Some("N")),
        c("reason", "stream reasoning before the reply", Some("TEXT")),
        c("plan", "publish a plan", Some("STEP; STEP; …")),
        c("fail", "make the turn fail", Some("MESSAGE")),
        c("history", "list this session's earlier inputs", None),
        c(
            "goal",
            "create a goal as the agent (steps=N: continuation turns; noevidence: no turn-scoped updates; idle: none)",
            Some("OBJECTIVE"),
        ),
        c("progress", "report progress on the agent's goal", None),
        c("hang", "never finish (until canceled)", None),
        c("exit", "simulate the agent process dying mid-turn", None),
        c("panic", "simulate a crash of the agent's turn task", None),
    ]
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Transcript {
    turns: Vec<TranscriptTurn>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct TranscriptTurn {
    input: String,
    reply: String,
}

type Answer = (Decision, Option<Value>);

struct RunningTurn {
    turn_id: String,
    cancel: CancellationToken,
    pending: HashMap<String, oneshot::Sender<Answer>>,
    steer: mpsc::UnboundedSender<String>,
}

struct Live {
    handle: SessionHandle,
    cwd: String,
    /// Side conversations keep nothing: their turns are never written to the store.
    ephemeral: bool,
    /// Inherited turns of a side (visible to the agent, not side history).
    inherited: usize,
    transcript: tokio::sync::Mutex<Transcript>,
    turn: Mutex<Option<RunningTurn>>,
    /// `acceptForSession` was given: later `/run`s need no approval.
    approved_for_session: AtomicBool,
    ids: AtomicU64,
    /// The agent's goal machinery (the same state machine codex sessions use).
    goals: Arc<GoalEngine>,
    /// The agent's own goal, as a provider reports it (kept in provider state).
    goal: Mutex<Option<ProviderGoal>>,
    /// The "thread" goals are bound to: stable across resumes, so the ledger still resolves them.
    thread: String,
    /// Goal timestamps: strictly increasing, so every snapshot has a fingerprint of its own.
    goal_clock: AtomicU64,
    /// Continuation steps done for the current goal.
    goal_steps: AtomicU64,
    /// A "provider" turn id per turn (user turns use Ensemble's).
    turn_seq: AtomicU64,
    config: ScriptedConfig,
}

impl Live {
    fn next_id(&self, prefix: &str) -> String {
        format!("{prefix}-{}", self.ids.fetch_add(1, Ordering::Relaxed) + 1)
    }

    fn turn(&self) -> std::sync::MutexGuard<'_, Option<RunningTurn>> {
        self.turn.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn goal(&self) -> std::sync::MutexGuard<'_, Option<ProviderGoal>> {
        self.goal.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn goal_time(&self) -> i64 {
        self.goal_clock.fetch_add(1, Ordering::SeqCst) as i64 + 1
    }

    /// Changes the agent's goal (a new snapshot: a new `updatedAt`) and keeps it in the store.
    async fn update_goal(&self, change: impl FnOnce(&mut ProviderGoal)) -> Option<ProviderGoal> {
        let updated = {
            let mut g = self.goal();
            let goal = g.as_mut()?;
            change(goal);
            goal.updated_at = self.goal_time();
            goal.clone()
        };
        self.save_goal().await;
        Some(updated)
    }

    async fn save_goal(&self) {
        if self.ephemeral {
            return;
        }
        let json = serde_json::to_string(&*self.goal()).unwrap_or_else(|_| "null".into());
        if let Err(e) = self.handle.state.set(GOAL_KEY, json).await {
            tracing::warn!(error = %e, "could not save the scripted goal");
        }
    }
}

/// The scripted provider.
pub struct ScriptedAdapter {
    config: ScriptedConfig,
    sessions: Mutex<HashMap<SessionKey, Arc<Live>>>,
}

impl ScriptedAdapter {
    pub fn new(config: ScriptedConfig) -> Self {
        Self { config, sessions: Mutex::new(HashMap::new()) }
    }

    fn live(&self, key: &SessionKey) -> Option<Arc<Live>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner()).get(key).cloned()
    }

    async fn open(&self, session: &Session, handle: SessionHandle) -> Result<StartOutcome, AdapterError> {
        let transcript = match handle.state.get(TRANSCRIPT_KEY).await {
            Ok(Some(json)) => serde_json::from_str(&json).unwrap_or_default(),
            Ok(None) => Transcript::default(),
            Err(e) => return Err(AdapterError::failed("state_unavailable", e.to_string())),
        };
        let goal: Option<ProviderGoal> = match handle.state.get(GOAL_KEY).await {
            Ok(Some(json)) => serde_json::from_str(&json).unwrap_or(None),
            _ => None,
        };
        let thread = format!("scripted-thread-{}", session.session_id);
        let goals = GoalEngine::new(handle.goals.clone(), handle.sink.clone(), handle.goal.clone());
        goals.set_thread(&thread);
        let live = Arc::new(Live {
            handle,
            cwd: session.cwd.clone(),
            ephemeral: false,
            inherited: 0,
            transcript: tokio::sync::Mutex::new(transcript),
            turn: Mutex::new(None),
            approved_for_session: AtomicBool::new(false),
            ids: AtomicU64::new(0),
            goals,
            goal: Mutex::new(goal.clone()),
            thread,
            goal_clock: AtomicU64::new(ensemble_runtime::clock::unix_ms().max(1) as u64),
            goal_steps: AtomicU64::new(0),
            turn_seq: AtomicU64::new(0),
            config: self.config.clone(),
        });
        let old = self.sessions.lock().unwrap_or_else(|e| e.into_inner()).insert(session.key(), live.clone());
        if let Some(old) = old {
            // Starting over a live session replaces it.
            stop_turn(&old);
        }
        if let Some(g) = goal {
            // Like codex on resume: report the goal, so the durable ledger resolves its generation.
            let engine = live.goals.clone();
            tokio::spawn(async move {
                engine.observed(g, None).await;
                maybe_continue(live);
            });
        }
        Ok(StartOutcome {
            patch: Default::default(),
            events: vec![EventBody::CommandsUpdated(CommandsUpdatedPayload { commands: commands() })],
        })
    }

    fn remove(&self, key: &SessionKey) -> Option<Arc<Live>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner()).remove(key)
    }
}

/// What a turn does.
enum Body {
    User(String),
    /// A turn the agent starts by itself to pursue its goal.
    Continuation {
        provider_turn: String,
        goal: ProviderGoal,
        step: u64,
        steps: u64,
    },
}

/// Runs a turn in the background; afterwards the agent may continue its goal.
fn spawn_turn(
    live: Arc<Live>,
    turn_id: String,
    body: Body,
    cancel: CancellationToken,
    steer: mpsc::UnboundedReceiver<String>,
    config: ScriptedConfig,
) {
    tokio::spawn(async move {
        let sink = live.handle.sink.clone();
        let run = TurnRun { live: live.clone(), turn_id: turn_id.clone(), cancel, steer, delay: config.chunk_delay };
        let outcome = match body {
            Body::User(text) => AssertUnwindSafe(run.run(text)).catch_unwind().await,
            Body::Continuation { provider_turn, goal, step, steps } => {
                AssertUnwindSafe(run.continuation(provider_turn, goal, step, steps)).catch_unwind().await
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
                sink.emit(Some(&turn_id), end).await;
                maybe_continue(live);
            }
            Ok(None) => {}
            Err(_) => {
                tracing::error!(session = %sink.key(), turn = %turn_id, "scripted turn task panicked");
                sink.lost("the scripted agent crashed (its turn task panicked)").await;
            }
        }
    });
}

/// If the agent's goal is active and has steps left, it starts a continuation turn by itself.
fn maybe_continue(live: Arc<Live>) {
    let Some(goal) = live.goal().clone().filter(ProviderGoal::is_active) else { return };
    let steps = goal_steps(&goal.objective);
    let step = live.goal_steps.load(Ordering::SeqCst) + 1;
    if step > steps {
        return;
    }
    let cancel = CancellationToken::new();
    let (steer_tx, steer_rx) = mpsc::unbounded_channel();
    let turn_id = ensemble_runtime::clock::new_id();
    {
        let mut slot = live.turn();
        if slot.is_some() {
            return;
        }
        *slot = Some(RunningTurn {
            turn_id: turn_id.clone(),
            cancel: cancel.clone(),
            pending: HashMap::new(),
            steer: steer_tx,
        });
    }
    live.goal_steps.store(step, Ordering::SeqCst);
    let provider_turn = format!("{}-turn-{}", live.thread, live.turn_seq.fetch_add(1, Ordering::Relaxed) + 1);
    let config = live.config.clone();
    spawn_turn(live, turn_id, Body::Continuation { provider_turn, goal, step, steps }, cancel, steer_rx, config);
}

/// `steps=N` in an objective: how many continuation turns it takes (default 1; `idle`: none).
fn goal_steps(objective: &str) -> u64 {
    if objective.split_whitespace().any(|w| w == "idle") {
        return 0;
    }
    objective
        .split_whitespace()
        .find_map(|w| w.strip_prefix("steps=").and_then(|n| n.parse().ok()))
        .unwrap_or(1)
        .clamp(1, MAX_GOAL_STEPS)
}

fn stop_turn(live: &Live) {
    if let Some(turn) = live.turn().take() {
        turn.cancel.cancel();
    }
}

fn notice(message: &str) -> EventBody {
    EventBody::Notice(NoticePayload { level: NoticeLevel::Info, message: message.to_owned() })
}

#[async_trait]
impl Adapter for ScriptedAdapter {
    fn id(&self) -> &str {
        &self.config.id
    }

    fn capabilities(&self) -> Capabilities {
        // No quiesce: close cancels the turn, which stops between two chunks.
        Capabilities { interactive: true, steer: true, quiesce: false, sides: true, goals: true }
    }

    fn descriptor(&self) -> ProviderDescriptor {
        ProviderDescriptor {
            display_name: "Scripted agent (built in)".into(),
            available: true,
            unavailable_reason: None,
        }
    }

    async fn start(&self, session: &Session, handle: SessionHandle) -> Result<StartOutcome, AdapterError> {
        self.open(session, handle).await
    }

    async fn resume(&self, session: &Session, handle: SessionHandle) -> Result<StartOutcome, AdapterError> {
        self.open(session, handle).await
    }

    async fn close(&self, session: &Session) -> Result<(), AdapterError> {
        if let Some(live) = self.remove(&session.key()) {
            stop_turn(&live);
        }
        Ok(())
    }

    async fn start_turn(&self, session: &Session, turn: TurnRequest) -> Result<(), AdapterError> {
        let live = self.live(&session.key()).ok_or(AdapterError::NotLive)?;
        let cancel = CancellationToken::new();
        let (steer_tx, steer_rx) = mpsc::unbounded_channel();
        {
            let mut slot = live.turn();
            if let Some(t) = slot.as_ref() {
                return Err(AdapterError::Busy(format!("turn {} is running", t.turn_id)));
            }
            *slot = Some(RunningTurn {
                turn_id: turn.turn_id.clone(),
                cancel: cancel.clone(),
                pending: HashMap::new(),
                steer: steer_tx,
            });
        }
        let text: String = turn.input.iter().map(InputItem::text).collect::<Vec<_>>().join("\n");
        spawn_turn(live, turn.turn_id, Body::User(text), cancel, steer_rx, self.config.clone());
        Ok(())
    }

    async fn cancel(&self, session: &Session, turn_id: &str) -> Result<(), AdapterError> {
        let live = self.live(&session.key()).ok_or(AdapterError::NotLive)?;
        let slot = live.turn();
        match slot.as_ref() {
            Some(t) if t.turn_id == turn_id => {
                t.cancel.cancel();
                Ok(())
            }
            // The turn already ended on our side; its terminal event is on its way.
            _ => Ok(()),
        }
    }

    fn is_live(&self, session: &Session) -> bool {
        self.live(&session.key()).is_some()
    }

    async fn apply_goal(&self, session: &Session, command: GoalCommand) -> Result<Option<ProviderGoal>, AdapterError> {
        let live = self.live(&session.key()).ok_or(AdapterError::NotLive)?;
        let engine = live.goals.clone();
        let call = async {
            if let GoalAction::Set { objective, .. } = &command.action
                && objective.contains("FAILONCE")
                && command.identity.repair_epoch == 0
            {
                return Err(AdapterError::failed("scripted_goal_failure", "the scripted agent failed this goal once"));
            }
            let now = live.goal_time();
            let snapshot = {
                let mut g = live.goal();
                match &command.action {
                    GoalAction::Set { objective, token_budget } => {
                        live.goal_steps.store(0, Ordering::SeqCst);
                        *g = Some(ProviderGoal {
                            thread_id: live.thread.clone(),
                            objective: objective.clone(),
                            status: "active".into(),
                            token_budget: *token_budget,
                            tokens_used: Some(0),
                            created_at: now,
                            updated_at: now,
                        });
                    }
                    GoalAction::Pause | GoalAction::Resume => {
                        let goal = g.as_mut().ok_or_else(|| AdapterError::Invalid("the agent has no goal".into()))?;
                        // A finished goal stays finished.
                        if goal.status != "complete" {
                            goal.status = if command.action == GoalAction::Pause { "paused" } else { "active" }.into();
                        }
                        goal.updated_at = now;
                    }
                    GoalAction::Clear => *g = None,
                }
                g.clone()
            };
            live.save_goal().await;
            if command.action == GoalAction::Clear {
                // As codex does: the `cleared` notification comes before the answer to the clear.
                engine.cleared().await;
            }
            Ok(snapshot)
        };
        let result = engine.apply(&command, call).await?;
        if result.as_ref().is_some_and(ProviderGoal::is_active) {
            // Goals are pursued by turns the agent starts itself.
            let live = live.clone();
            tokio::spawn(async move { maybe_continue(live) });
        }
        Ok(result)
    }

    async fn side_capabilities(&self, source: &Session) -> Result<SideCapabilities, AdapterError> {
        if self.live(&source.key()).is_none() {
            return Ok(SideCapabilities::default());
        }
        let mut caps = SideCapabilities::all();
        if self.config.side == SideBehavior::NoBoundary {
            caps.model_boundary_injected = false;
        }
        Ok(caps)
    }

    async fn open_side(&self, open: SideOpen<'_>) -> Result<SideOpened, AdapterError> {
        let source = self.live(&open.source.key()).ok_or(AdapterError::NotLive)?;
        if self.config.side == SideBehavior::Fail {
            // Something raced the failed fork; it must vanish with the reservation.
            open.handle.sink.emit(None, notice("the fork is starting")).await;
            return Err(AdapterError::failed("side_open_failed", "the scripted provider was told to fail the fork"));
        }
        // The side inherits the conversation so far (the agent sees it; it is not side history),
        // then a boundary the agent can see.
        let inherited = source.transcript.lock().await.clone();
        let live = Arc::new(Live {
            handle: open.handle.clone(),
            cwd: open.side.cwd.clone(),
            ephemeral: true,
            inherited: inherited.turns.len(),
            transcript: tokio::sync::Mutex::new(inherited),
            turn: Mutex::new(None),
            approved_for_session: AtomicBool::new(false),
            ids: AtomicU64::new(0),
            goals: GoalEngine::new(open.handle.goals.clone(), open.handle.sink.clone(), Default::default()),
            goal: Mutex::new(None),
            thread: format!("scripted-thread-{}", open.side.session_id),
            goal_clock: AtomicU64::new(1),
            goal_steps: AtomicU64::new(0),
            turn_seq: AtomicU64::new(0),
            config: self.config.clone(),
        });
        self.sessions.lock().unwrap_or_else(|e| e.into_inner()).insert(open.side.key(), live);
        // A provider event that races the open: buffered, and published after session.started.
        open.handle.sink.emit(None, notice("side conversation boundary: earlier turns are context only")).await;
        let mut session = open.side.clone();
        session.provider_session_id = Some(format!("scripted-side-{}", open.side.session_id));
        match self.config.side {
            SideBehavior::SourceIdentity => session = open.source.clone(),
            SideBehavior::NoProviderId => session.provider_session_id = None,
            _ => {}
        }
        let mut capabilities = SideCapabilities::all();
        if self.config.side == SideBehavior::NoBoundary {
            capabilities.model_boundary_injected = false;
        }
        Ok(SideOpened { session, capabilities })
    }

    async fn respond(
        &self,
        session: &Session,
        request_id: &str,
        decision: Decision,
        answers: Option<Value>,
    ) -> Result<(), AdapterError> {
        let live = self.live(&session.key()).ok_or(AdapterError::NotLive)?;
        let tx = live
            .turn()
            .as_mut()
            .and_then(|t| t.pending.remove(request_id))
            .ok_or_else(|| AdapterError::UnknownInteraction(request_id.to_owned()))?;
        tx.send((decision, answers)).map_err(|_| AdapterError::AlreadyAnswered(request_id.to_owned()))
    }

    async fn steer(&self, session: &Session, turn_id: &str, input: Vec<InputItem>) -> Result<(), AdapterError> {
        let live = self.live(&session.key()).ok_or(AdapterError::NotLive)?;
        let slot = live.turn();
        let t = slot
            .as_ref()
            .filter(|t| t.turn_id == turn_id)
            .ok_or_else(|| AdapterError::Invalid("no such running turn".into()))?;
        let text = input.iter().map(InputItem::text).collect::<Vec<_>>().join("\n");
        t.steer.send(text).map_err(|_| AdapterError::Invalid("the turn is ending".into()))
    }

    async fn release(&self, session: &Session) -> Result<(), AdapterError> {
        let key = session.key();
        let live = self.live(&key).ok_or(AdapterError::NotLive)?;
        if live.turn().is_some() {
            return Err(AdapterError::Busy("a turn is running".into()));
        }
        self.remove(&key);
        Ok(())
    }

    async fn disconnect(&self, session: &Session) -> Result<(), AdapterError> {
        if let Some(live) = self.remove(&session.key()) {
            // Dropping the turn drops its pending answer channels: waiting requests end.
            stop_turn(&live);
        }
        Ok(())
    }
}

/// Why a turn stopped early.
enum Stop {
    Canceled,
    Declined,
    /// The turn's end was already reported (a failure, or the "process" died).
    Reported,
}

struct TurnRun {
    live: Arc<Live>,
    turn_id: String,
    cancel: CancellationToken,
    steer: mpsc::UnboundedReceiver<String>,
    delay: Duration,
}

impl TurnRun {
    fn sink(&self) -> &EventSink {
        &self.live.handle.sink
    }

    async fn emit(&self, body: EventBody) {
        self.sink().emit(Some(&self.turn_id), body).await;
    }

    /// Waits `d`, or stops when the turn is canceled.
    async fn pause(&self, d: Duration) -> Result<(), Stop> {
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
    async fn run(mut self, input: String) -> Option<EventBody> {
        let directives = parse(&input);
        let mut reply = String::new();
        let result = self.script(&directives, &mut reply).await;
        let turn_id = self.turn_id.clone();
        match result {
            Ok(()) => {
                self.record(&input, &reply).await;
                let words = (input.split_whitespace().count() + reply.split_whitespace().count()) as i64;
                self.emit(EventBody::UsageUpdated(UsagePayload {
                    input_tokens: input.split_whitespace().count() as i64,
                    output_tokens: reply.split_whitespace().count() as i64,
                    total_tokens: words,
                    last_turn_total_tokens: Some(words),
                    ..Default::default()
                }))
                .await;
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
    async fn continuation(
        mut self,
        provider_turn: String,
        goal: ProviderGoal,
        step: u64,
        steps: u64,
    ) -> Option<EventBody> {
        let live = self.live.clone();
        if !goal.objective.contains("noevidence") {
            // A turn-scoped progress update: exact evidence of the goal this turn serves.
            let progress = live.update_goal(|g| g.tokens_used = Some(g.tokens_used.unwrap_or(0) + 10)).await;
            if let Some(p) = progress {
                live.goals.observed(p, Some(&provider_turn)).await;
            }
        }
        let attributed = live.goals.attribute(&provider_turn, live.config.goal_grace).await;
        let turn_id = self.turn_id.clone();
        let started = ensemble_runtime::goal::provider_turn_started(&turn_id, attributed.as_ref());
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
            && let Some(done) = live.update_goal(|g| g.status = "complete".into()).await
        {
            live.goals.observed(done, Some(&provider_turn)).await;
        }
        Some(EventBody::TurnCompleted(TurnCompletedPayload { turn_id }))
    }

    async fn record(&self, input: &str, reply: &str) {
        let mut t = self.live.transcript.lock().await;
        t.turns.push(TranscriptTurn { input: input.to_owned(), reply: reply.to_owned() });
        let excess = t.turns.len().saturating_sub(TRANSCRIPT_TURNS);
        t.turns.drain(..excess);
        if self.live.ephemeral {
            return;
        }
        match serde_json::to_string(&*t) {
            Ok(json) => {
                if let Err(e) = self.live.handle.state.set(TRANSCRIPT_KEY, json).await {
                    tracing::warn!(error = %e, "could not save the scripted transcript");
                }
            }
            Err(e) => tracing::warn!(error = %e, "could not encode the scripted transcript"),
        }
    }

    async fn script(&mut self, directives: &[Directive], reply: &mut String) -> Result<(), Stop> {
        let mut said = Vec::new();
        for d in directives {
            match d {
                Directive::Slow(ms) => self.delay = Duration::from_millis(*ms),
                Directive::Say(text) => said.push(format!("You said: {text}")),
                Directive::Tool { name, args } => self.tool(name, args).await?,
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
                    self.live.goals.observed(goal, Some(&self.turn_id)).await;
                    said.push(format!("I set myself a goal: {objective}"));
                }
                Directive::Progress => {
                    let progress =
                        self.live.update_goal(|g| g.tokens_used = Some(g.tokens_used.unwrap_or(0) + 10)).await;
                    match progress {
                        Some(p) => {
                            self.live.goals.observed(p, Some(&self.turn_id)).await;
                            said.push("I made progress on the goal.".into());
                        }
                        None => said.push("I have no goal.".into()),
                    }
                }
                Directive::Hang => {
                    self.cancel.cancelled().await;
                    return Err(Stop::Canceled);
                }
                Directive::Exit => {
                    self.sink().lost("the scripted agent exited mid-turn").await;
                    return Err(Stop::Reported);
                }
                Directive::Panic => panic_now(),
                Directive::Unknown(line) => said.push(format!("Unknown directive: {line}")),
            }
        }
        if said.is_empty() && reply.is_empty() {
            said.push("Done.".into());
        }
        if !said.is_empty() {
            self.stream_message(&said.join("\n"), reply).await?;
        }
        Ok(())
    }

    /// Streams one agent message word by word; steering input received meanwhile is appended.
    async fn stream_message(&mut self, text: &str, reply: &mut String) -> Result<(), Stop> {
        let item_id = self.live.next_id("msg");
        let mut sent = String::new();
        let mut words: Vec<String> = split_words(text);
        let mut i = 0;
        while i < words.len() {
            while let Ok(extra) = self.steer.try_recv() {
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

    async fn stream_reasoning(&self, text: &str) -> Result<(), Stop> {
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

    async fn tool(&self, name: &str, args: &str) -> Result<(), Stop> {
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

    /// Registers a pending request and waits for its answer (or the turn's end).
    async fn request(&self, payload: InteractionRequestedPayload) -> Result<Answer, Stop> {
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

    async fn run_command(&self, cmd: &str) -> Result<String, Stop> {
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
        self.pause(self.delay).await?;
        let output = format!("(scripted) ran: {cmd}\n");
        self.emit(EventBody::CallUpdated(CallUpdatedPayload {
            call_id: call_id.clone(),
            output_delta: Some(output.clone()),
            status: None,
        }))
        .await;
        self.emit(EventBody::CallCompleted(CallCompletedPayload {
            call_id,
            status: CallStatus::Completed,
            output: Some(output),
            exit_code: Some(0),
            changes: vec![],
        }))
        .await;
        Ok(format!("The command `{cmd}` ran."))
    }

    async fn ask(&self, question: &str) -> Result<String, Stop> {
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
fn answer_text(answers: Option<&Value>) -> String {
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
fn panic_now() -> ! {
    panic!("the /panic directive")
}

/// Splits text into words that keep their following whitespace, so the deltas concatenate back.
fn split_words(text: &str) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_directives_and_text() {
        let d =
            parse("hello there\n/tool grep -n foo\n/run ls -la\n/ask Which color?\n/slow 5\n/bogus x\n\n/fail boom");
        assert_eq!(
            d,
            vec![
                Directive::Say("hello there".into()),
                Directive::Tool { name: "grep".into(), args: "-n foo".into() },
                Directive::Run("ls -la".into()),
                Directive::Ask("Which color?".into()),
                Directive::Slow(5),
                Directive::Unknown("/bogus x".into()),
                Directive::Fail("boom".into()),
            ]
        );
        assert_eq!(parse("/slow fast"), vec![Directive::Unknown("/slow fast".into())]);
        assert_eq!(parse("/plan a; b ;; c"), vec![Directive::Plan(vec!["a".into(), "b".into(), "c".into()])]);
    }

    #[test]
    fn words_concatenate_back() {
        let text = "one two  three\nfour";
        assert_eq!(split_words(text).concat(), text);
        assert_eq!(split_words("a b").len(), 2);
    }

    #[test]
    fn answers_in_both_shapes() {
        assert_eq!(answer_text(Some(&serde_json::json!({"answer": "blue"}))), "blue");
        assert_eq!(answer_text(Some(&serde_json::json!({"answer": {"answers": ["red", "green"]}}))), "red, green");
        assert_eq!(answer_text(None), "");
    }
}
