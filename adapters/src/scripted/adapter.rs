//! The scripted provider's adapter: live sessions by key, and the operations of the contract.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use async_trait::async_trait;
use ensemble_core::adapter::{
    Adapter, AdapterError, Capabilities, InputKinds, Prompt, ProviderDescriptor, SessionHandle, SideOpen, SideOpened,
    StartOutcome, TurnRequest,
};
use ensemble_core::event::{CommandsUpdatedPayload, Decision, EventBody};
use ensemble_core::goal::{GoalAction, GoalCommand, ProviderGoal};
use ensemble_core::model::{ConfigChange, Session, SessionKey, SessionPatch, SideCapabilities};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::config::{ScriptedConfig, SideBehavior};
use super::directives::commands;
use super::live::{GOAL_KEY, GOAL_STEPS_KEY, Live, RunningTurn, stop_turn};
use super::modes::{self, Voice};
use super::transcript::Transcript;
use super::turn::{Body, maybe_continue, notice, spawn_turn};
use crate::kit::sessions::Sessions;

/// Where a session being opened comes from.
#[derive(Clone, Copy)]
enum Opening {
    /// A start: a new id, nothing stored.
    New,
    /// A resume: its transcript and goal are in the provider state.
    Stored,
}

/// The scripted provider.
pub struct ScriptedAdapter {
    config: ScriptedConfig,
    sessions: Sessions<Live>,
}

impl ScriptedAdapter {
    /// `live_sessions`: the most that may be live at once (its table is made ready for them).
    pub fn new(config: ScriptedConfig, live_sessions: usize) -> Self {
        Self { config, sessions: Sessions::with_capacity(live_sessions) }
    }

    fn live(&self, key: &SessionKey) -> Option<Arc<Live>> {
        self.sessions.get(key)
    }

    async fn open(
        &self,
        session: &Session,
        handle: SessionHandle,
        from: Opening,
    ) -> Result<StartOutcome, AdapterError> {
        // A start is for an id never started before (a used id, closed or not, is refused), so
        // nothing is stored for it: three store reads skipped (a tenth of the server's CPU in a
        // profile of session starts).
        let (transcript, goal, steps) = match from {
            Opening::New => (Transcript::default(), None, 0),
            Opening::Stored => {
                let transcript = Transcript::load(&handle.state).await?;
                let goal: Option<ProviderGoal> = match handle.state.get(GOAL_KEY).await {
                    Ok(Some(json)) => serde_json::from_str(&json).unwrap_or(None),
                    _ => None,
                };
                let steps = match handle.state.get(GOAL_STEPS_KEY).await {
                    Ok(Some(n)) => n.parse().unwrap_or(0),
                    _ => 0,
                };
                (transcript, goal, steps)
            }
        };
        let thread = format!("scripted-thread-{}", session.session_id);
        let live = Arc::new(Live {
            handle,
            cwd: session.cwd.clone(),
            place: crate::kit::sandbox::Place::of(session),
            ephemeral: false,
            inherited: 0,
            transcript: tokio::sync::Mutex::new(transcript),
            turn: Mutex::new(None),
            approved_for_session: AtomicBool::new(false),
            ids: AtomicU64::new(0),
            goals: OnceLock::new(),
            goal: Mutex::new(goal.clone()),
            thread,
            goal_clock: AtomicU64::new(ensemble_core::clock::unix_ms().max(1) as u64),
            goal_steps: AtomicU64::new(steps),
            turn_seq: AtomicU64::new(0),
            config: self.config.clone(),
        });
        let old = self.sessions.replace(session.key(), live.clone());
        if let Some(old) = old {
            // Starting over a live session replaces it.
            stop_turn(&old);
        }
        if let Some(g) = goal {
            // Like codex on resume: report the goal, so the durable ledger resolves its generation.
            let engine = live.goals().clone();
            tokio::spawn(async move {
                engine.observed(g, None).await;
                maybe_continue(live);
            });
        }
        Ok(StartOutcome {
            patch: modes::offered(session),
            events: vec![EventBody::CommandsUpdated(CommandsUpdatedPayload { commands: commands() })],
        })
    }

    fn remove(&self, key: &SessionKey) -> Option<Arc<Live>> {
        self.sessions.remove(key)
    }
}

#[async_trait]
impl Adapter for ScriptedAdapter {
    fn id(&self) -> &str {
        &self.config.id
    }

    fn capabilities(&self) -> Capabilities {
        // No quiesce: close cancels the turn, which stops between two chunks.
        Capabilities {
            interactive: true,
            steer: true,
            quiesce: false,
            sides: true,
            goals: true,
            config: true,
            config_mid_turn: false,
        }
    }

    fn descriptor(&self) -> ProviderDescriptor {
        ProviderDescriptor {
            display_name: "Scripted agent (built in)".into(),
            available: true,
            unavailable_reason: None,
            agent: None,
        }
    }

    async fn start(&self, session: &Session, handle: SessionHandle) -> Result<StartOutcome, AdapterError> {
        self.open(session, handle, Opening::New).await
    }

    async fn resume(&self, session: &Session, handle: SessionHandle) -> Result<StartOutcome, AdapterError> {
        self.open(session, handle, Opening::Stored).await
    }

    async fn fork(
        &self,
        open: ensemble_core::adapter::ForkOpen<'_>,
        session: &Session,
        handle: SessionHandle,
    ) -> Result<StartOutcome, AdapterError> {
        let source = Transcript::load(&open.source_state).await?;
        let Some(forked) = source.through(open.through_turn) else {
            return Err(AdapterError::Unsupported(format!(
                "turn {} is not in the scripted agent's transcript (it keeps the last turns only)",
                open.through_turn
            )));
        };
        // Kept first, so the fork opens as a stored session with that conversation.
        forked.save(&handle.state).await;
        self.open(session, handle, Opening::Stored).await
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
        {
            let mut slot = live.turn();
            if let Some(t) = slot.as_ref() {
                return Err(AdapterError::Busy(format!("turn {} is running", t.turn_id)));
            }
            *slot = Some(RunningTurn {
                turn_id: turn.turn_id.clone(),
                cancel: cancel.clone(),
                pending: HashMap::new(),
                steered: Vec::new(),
            });
        }
        let (text, received) = described(&turn.input);
        spawn_turn(live, turn.turn_id, Body::User(text, Voice::of(session), received), cancel, self.config.clone());
        Ok(())
    }

    async fn set_config(&self, session: &Session, change: ConfigChange) -> Result<SessionPatch, AdapterError> {
        Ok(modes::changed(session, &change))
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

    fn isolation(&self) -> Option<ensemble_core::isolation::ProviderIsolation> {
        Some(self.config.isolation())
    }

    async fn apply_goal(&self, session: &Session, command: GoalCommand) -> Result<Option<ProviderGoal>, AdapterError> {
        let live = self.live(&session.key()).ok_or(AdapterError::NotLive)?;
        let engine = live.goals().clone();
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
            place: crate::kit::sandbox::Place::of(open.side),
            ephemeral: true,
            inherited: inherited.turns.len(),
            transcript: tokio::sync::Mutex::new(inherited),
            turn: Mutex::new(None),
            approved_for_session: AtomicBool::new(false),
            ids: AtomicU64::new(0),
            goals: OnceLock::new(),
            goal: Mutex::new(None),
            thread: format!("scripted-thread-{}", open.side.session_id),
            goal_clock: AtomicU64::new(1),
            goal_steps: AtomicU64::new(0),
            turn_seq: AtomicU64::new(0),
            config: self.config.clone(),
        });
        self.sessions.replace(open.side.key(), live);
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
        _option: Option<&str>,
    ) -> Result<(), AdapterError> {
        let live = self.live(&session.key()).ok_or(AdapterError::NotLive)?;
        let tx = live
            .turn()
            .as_mut()
            .and_then(|t| t.pending.remove(request_id))
            .ok_or_else(|| AdapterError::UnknownInteraction(request_id.to_owned()))?;
        tx.send((decision, answers)).map_err(|_| AdapterError::AlreadyAnswered(request_id.to_owned()))
    }

    fn input_kinds(&self, _session: &Session) -> InputKinds {
        InputKinds::all()
    }

    async fn steer(&self, session: &Session, turn_id: &str, input: Vec<Prompt>) -> Result<(), AdapterError> {
        let live = self.live(&session.key()).ok_or(AdapterError::NotLive)?;
        let mut slot = live.turn();
        let t = slot
            .as_mut()
            .filter(|t| t.turn_id == turn_id)
            .ok_or_else(|| AdapterError::Invalid("no such running turn".into()))?;
        t.steered.push(described(&input).0);
        Ok(())
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

/// A turn's text (its text items, a line each), and its images and files described as the
/// scripted agent says it received them.
fn described(input: &[Prompt]) -> (String, Vec<String>) {
    let mut text = Vec::new();
    let mut received = Vec::new();
    for item in input {
        match item {
            Prompt::Text(t) => text.push(t.as_str()),
            Prompt::Image(i) => {
                let name = i.name.as_deref().map(|n| format!(" named {n}")).unwrap_or_default();
                let at = i.path.as_ref().map(|p| format!(" from {}", p.display())).unwrap_or_default();
                received.push(format!("an image{name}{at} ({}, {} bytes)", i.mime_type, i.data.len()));
            }
            Prompt::File(f) => {
                let first = f
                    .content
                    .as_deref()
                    .and_then(|c| std::str::from_utf8(c).ok())
                    .and_then(|t| t.lines().next())
                    .map(|l| format!(", first line: {}", l.chars().take(80).collect::<String>()))
                    .unwrap_or_default();
                received.push(format!("the file {} ({}, {} bytes{first})", f.name, f.mime_type, f.size));
            }
        }
    }
    (text.join("\n"), received)
}
