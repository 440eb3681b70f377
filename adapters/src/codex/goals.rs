//! Goals on codex: a goal operation becomes `thread/goal/set|clear`; codex's goal becomes the
//! runtime's [`ProviderGoal`]. The goal engine (kit) decides everything else.

use std::time::Duration;

use ensemble_runtime::adapter::AdapterError;
use ensemble_runtime::goal::{GoalAction, GoalCommand, ProviderGoal};
use serde_json::{Value, json};

use super::conn::{Conn, Routed};
use crate::kit::goals::GoalEngine;

/// Applies a goal operation to `thread` through the goal engine.
pub(super) async fn apply<T: Routed>(
    conn: &Conn<T>,
    engine: &GoalEngine,
    thread: &str,
    command: &GoalCommand,
    timeout: Duration,
) -> Result<Option<ProviderGoal>, AdapterError> {
    let call = async {
        let (method, params) = match &command.action {
            GoalAction::Set { objective, token_budget } => {
                let mut p = json!({"threadId": thread, "objective": objective, "status": "active"});
                if let Some(b) = token_budget {
                    p["tokenBudget"] = json!(b);
                }
                ("thread/goal/set", p)
            }
            GoalAction::Pause => ("thread/goal/set", json!({"threadId": thread, "status": "paused"})),
            GoalAction::Resume => ("thread/goal/set", json!({"threadId": thread, "status": "active"})),
            GoalAction::Clear => ("thread/goal/clear", json!({"threadId": thread})),
        };
        match conn.rpc.call(method, params, timeout).await {
            Ok(v) => Ok(v.get("goal").and_then(provider_goal)),
            Err(e) => Err(conn.rpc_error(method, e).await),
        }
    };
    engine.apply(command, call).await
}

/// A codex goal (`thread/goal/*`) as a [`ProviderGoal`].
pub(super) fn provider_goal(v: &Value) -> Option<ProviderGoal> {
    if v.is_null() {
        return None;
    }
    let n = |k: &str| v.get(k).and_then(Value::as_i64);
    Some(ProviderGoal {
        thread_id: v.get("threadId").and_then(Value::as_str).unwrap_or_default().to_owned(),
        objective: v.get("objective").and_then(Value::as_str).unwrap_or_default().to_owned(),
        status: v.get("status").and_then(Value::as_str).unwrap_or_default().to_owned(),
        token_budget: n("tokenBudget"),
        tokens_used: n("tokensUsed"),
        created_at: n("createdAt").unwrap_or(0),
        updated_at: n("updatedAt").unwrap_or(0),
    })
}
