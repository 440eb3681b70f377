//! Goals on codex: a goal operation becomes `thread/goal/set|clear`, through the goal engine
//! (kit), which decides everything else.

use std::time::Duration;

use ensemble_core::adapter::AdapterError;
use ensemble_core::goal::{GoalAction, GoalCommand, ProviderGoal};

use super::conn::{Conn, Routed};
use super::translate::provider_goal;
use super::wire::{ThreadGoalClear, ThreadGoalSet, ThreadGoalSetParams, ThreadGoalStatus, ThreadIdParams};
use crate::kit::goals::GoalEngine;

/// Applies a goal operation to `thread` through the goal engine.
pub(super) async fn apply<T: Routed>(
    conn: &Conn<T>,
    engine: &GoalEngine,
    thread: &str,
    command: &GoalCommand,
    timeout: Duration,
) -> Result<Option<ProviderGoal>, AdapterError> {
    let set = |status, objective: Option<&String>, token_budget: Option<i64>| ThreadGoalSetParams {
        thread_id: thread.to_owned(),
        objective: objective.cloned(),
        status: Some(status),
        token_budget,
    };
    let call = async {
        let params = match &command.action {
            GoalAction::Set { objective, token_budget } => {
                set(ThreadGoalStatus::Active, Some(objective), *token_budget)
            }
            GoalAction::Pause => set(ThreadGoalStatus::Paused, None, None),
            GoalAction::Resume => set(ThreadGoalStatus::Active, None, None),
            GoalAction::Clear => {
                let params = ThreadIdParams { thread_id: thread.to_owned() };
                return conn.call_discarding::<ThreadGoalClear>(&params, timeout).await.map(|()| None);
            }
        };
        let response = conn.call::<ThreadGoalSet>(&params, timeout).await?;
        Ok(response.goal.map(provider_goal))
    };
    engine.apply(command, call).await
}
