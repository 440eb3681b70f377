//! One live scripted session: its transcript, running turn, approvals and goal.

/// The provider-state key of the agent's own goal.
pub(super) const GOAL_KEY: &str = "goal";
/// The provider-state key of the continuation steps done for that goal (so a restart does not
/// start counting again).
pub(super) const GOAL_STEPS_KEY: &str = "goal_steps";

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use ensemble_core::adapter::SessionHandle;
use ensemble_core::event::Decision;
use ensemble_core::goal::ProviderGoal;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::config::ScriptedConfig;
use super::transcript::Transcript;
use crate::kit::goals::GoalEngine;

pub(super) type Answer = (Decision, Option<Value>);

pub(super) struct RunningTurn {
    pub(super) turn_id: String,
    pub(super) cancel: CancellationToken,
    pub(super) pending: HashMap<String, oneshot::Sender<Answer>>,
    /// Steering input the turn has not read yet (it reads it between words).
    pub(super) steered: Vec<String>,
}

pub(super) struct Live {
    pub(super) handle: SessionHandle,
    pub(super) cwd: String,
    /// Where `/run` makes its box (the session's isolation and workspace).
    pub(super) place: crate::kit::sandbox::Place,
    /// Side conversations keep nothing: their turns are never written to the store.
    pub(super) ephemeral: bool,
    /// Inherited turns of a side (visible to the agent, not side history).
    pub(super) inherited: usize,
    pub(super) transcript: tokio::sync::Mutex<Transcript>,
    pub(super) turn: Mutex<Option<RunningTurn>>,
    /// `acceptForSession` was given: later `/run`s need no approval.
    pub(super) approved_for_session: AtomicBool,
    pub(super) ids: AtomicU64,
    /// The agent's goal machinery (the same state machine codex sessions use), made at its first
    /// use ([`Live::goals`]): most sessions never have a goal, and it was a sixth of a session's
    /// memory.
    pub(super) goals: OnceLock<Arc<GoalEngine>>,
    /// The agent's own goal, as a provider reports it (kept in provider state).
    pub(super) goal: Mutex<Option<ProviderGoal>>,
    /// The "thread" goals are bound to: stable across resumes, so the ledger still resolves them.
    pub(super) thread: String,
    /// Goal timestamps: strictly increasing, so every snapshot has a fingerprint of its own.
    pub(super) goal_clock: AtomicU64,
    /// Continuation steps done for the current goal.
    pub(super) goal_steps: AtomicU64,
    /// A "provider" turn id per turn (user turns use Ensemble's).
    pub(super) turn_seq: AtomicU64,
    pub(super) config: ScriptedConfig,
}

impl Live {
    /// The goal engine, made as it would have been at the start: bound to the session's goal
    /// identity and thread (a side's to neither: it has no goal of its own).
    pub(super) fn goals(&self) -> &Arc<GoalEngine> {
        self.goals.get_or_init(|| {
            let h = &self.handle;
            let identity = if self.ephemeral { Default::default() } else { h.goal.clone() };
            let engine = GoalEngine::new(h.goals.clone(), h.sink.clone(), identity);
            if !self.ephemeral {
                engine.set_thread(&self.thread);
            }
            engine
        })
    }

    pub(super) fn next_id(&self, prefix: &str) -> String {
        format!("{prefix}-{}", self.ids.fetch_add(1, Ordering::Relaxed) + 1)
    }

    pub(super) fn turn(&self) -> std::sync::MutexGuard<'_, Option<RunningTurn>> {
        self.turn.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn goal(&self) -> std::sync::MutexGuard<'_, Option<ProviderGoal>> {
        self.goal.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn goal_time(&self) -> i64 {
        self.goal_clock.fetch_add(1, Ordering::SeqCst) as i64 + 1
    }

    /// Changes the agent's goal (a new snapshot: a new `updatedAt`) and keeps it in the store.
    pub(super) async fn update_goal(&self, change: impl FnOnce(&mut ProviderGoal)) -> Option<ProviderGoal> {
        self.update_goal_of(None, change).await
    }

    /// As [`Live::update_goal`], but only while the agent's goal is still the generation `of`
    /// (same creation and objective): a continuation must not finish a goal set after it began.
    pub(super) async fn update_goal_of(
        &self,
        of: Option<&ProviderGoal>,
        change: impl FnOnce(&mut ProviderGoal),
    ) -> Option<ProviderGoal> {
        let updated = {
            let mut g = self.goal();
            let goal = g.as_mut()?;
            if of.is_some_and(|o| o.created_at != goal.created_at || o.objective != goal.objective) {
                return None;
            }
            change(goal);
            goal.updated_at = self.goal_time();
            goal.clone()
        };
        self.save_goal().await;
        Some(updated)
    }

    pub(super) async fn save_goal(&self) {
        if self.ephemeral {
            return;
        }
        let json = serde_json::to_string(&*self.goal()).unwrap_or_else(|_| "null".into());
        if let Err(e) = self.handle.state.set(GOAL_KEY, json).await {
            tracing::warn!(error = %e, "could not save the scripted goal");
        }
        let steps = self.goal_steps.load(Ordering::SeqCst).to_string();
        if let Err(e) = self.handle.state.set(GOAL_STEPS_KEY, steps).await {
            tracing::warn!(error = %e, "could not save the scripted goal's steps");
        }
    }
}

pub(super) fn stop_turn(live: &Live) {
    if let Some(turn) = live.turn().take() {
        turn.cancel.cancel();
    }
}
