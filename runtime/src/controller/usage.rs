//! Usage and budgets: what a session and a room spent (the sessions' ledgers, see
//! [`crate::usage`]), and the limits on it. A session's budget is its own or the server's
//! default; a room's is kept in the store (under the room, with no session) or the default. Once
//! either is reached no new turn starts (409 `budget_exhausted`, queued turns wait too), a
//! `notice` says so once, and the running turn is canceled when the budget says `cancel`. A higher
//! budget lets work go on.

use std::collections::BTreeMap;

use serde_json::json;

use super::Controller;
use super::error::{ControllerError, Result};
use super::publish::Persist;
use crate::usage::state;
use ensemble_core::event::{BudgetExhaustedPayload, EventBody, NoticeLevel, NoticePayload};
use ensemble_core::model::SessionKey;
use ensemble_core::usage::{
    Budget, BudgetState, OnExhausted, ProviderUsage, RoomUsage, SessionUsage, SessionUsageLine, TurnUsage, UsageTotals,
};

/// The provider-state key a room's budget is kept under (with no session).
const ROOM_BUDGET_KEY: &str = "room.budget";

impl Controller {
    fn session_budget(&self, own: Option<&Budget>) -> Option<Budget> {
        own.cloned().or_else(|| self.inner.config.default_session_budget.clone())
    }

    fn room_budget(&self, room: &str) -> Option<Budget> {
        let kept = self.inner.room_budgets.lock().unwrap_or_else(|e| e.into_inner()).get(room).cloned();
        kept.or_else(|| self.inner.config.default_room_budget.clone())
    }

    /// The rooms' budgets kept in the store, read at start.
    pub(super) async fn load_room_budgets(&self, rooms: impl IntoIterator<Item = String>) -> Result<()> {
        for room in rooms {
            if let Some(json) = self.inner.store.provider_state(&room, "", ROOM_BUDGET_KEY).await?
                && let Ok(budget) = serde_json::from_str::<Budget>(&json)
            {
                self.inner.room_budgets.lock().unwrap_or_else(|e| e.into_inner()).insert(room, budget);
            }
        }
        Ok(())
    }

    /// What the session spent, and its budget.
    pub fn session_usage(&self, key: &SessionKey) -> Result<SessionUsage> {
        let st = self.state();
        let e = st.announced(key)?;
        let budget = self.session_budget(e.rec.budget.as_ref());
        let totals = e.rec.usage.totals.clone();
        let state = budget.as_ref().map(|b| state(b, &totals)).unwrap_or_else(|| open(&totals));
        Ok(SessionUsage {
            totals,
            turns: e
                .rec
                .usage
                .turns
                .iter()
                .map(|t| TurnUsage { turn_id: t.turn_id.clone(), usage: t.usage.clone() })
                .collect(),
            provider: e.rec.session.provider.clone(),
            model: e.rec.session.settings.model.clone(),
            budget,
            state,
        })
    }

    /// What a room's sessions spent, in all, by provider and model and by session, and its budget.
    pub fn room_usage(&self, room: &str) -> Result<RoomUsage> {
        let (totals, providers, sessions) = {
            let st = self.state();
            let mut totals = UsageTotals::default();
            let mut by: BTreeMap<(String, Option<String>), UsageTotals> = BTreeMap::new();
            let mut sessions = Vec::new();
            for (key, e) in st.sessions.iter().filter(|(k, e)| k.room_id == room && e.announced) {
                let spent = &e.rec.usage.totals;
                totals.add(spent);
                let s = &e.rec.session;
                by.entry((s.provider.clone(), s.settings.model.clone())).or_default().add(spent);
                sessions.push(SessionUsageLine { session_id: key.session_id.clone(), usage: spent.clone() });
            }
            sessions.sort_by(|a, b| a.session_id.cmp(&b.session_id));
            let providers =
                by.into_iter().map(|((provider, model), usage)| ProviderUsage { provider, model, usage }).collect();
            (totals, providers, sessions)
        };
        let budget = self.room_budget(room);
        let state = budget.as_ref().map(|b| state(b, &totals)).unwrap_or_else(|| open(&totals));
        Ok(RoomUsage { totals, providers, sessions, budget, state })
    }

    /// Sets (or with `None` clears, back to the default) the session's budget.
    pub async fn set_session_budget(&self, key: &SessionKey, budget: Option<Budget>) -> Result<SessionUsage> {
        check(budget.as_ref())?;
        let guard = self.lock(key).await?;
        self.publish_with(key, Persist::Always, |b| {
            b.entry.rec.budget = budget;
            // A new budget is said again when it too is reached.
            b.entry.rec.usage.exhausted_said = false;
            Ok(())
        })
        .await?
        .durable()
        .await?;
        drop(guard);
        // A queue a reached budget held goes on under a higher one.
        self.spawn_drain(key);
        self.session_usage(key)
    }

    /// Sets (or with `None` clears, back to the default) a room's budget.
    pub async fn set_room_budget(&self, room: &str, budget: Option<Budget>) -> Result<RoomUsage> {
        check(budget.as_ref())?;
        let json = match &budget {
            Some(b) => serde_json::to_string(b).map_err(|e| ControllerError::InvalidInput(e.to_string()))?,
            None => String::new(),
        };
        self.inner.store.set_provider_state(room, "", ROOM_BUDGET_KEY, json).await?;
        {
            let mut kept = self.inner.room_budgets.lock().unwrap_or_else(|e| e.into_inner());
            match budget {
                Some(b) => kept.insert(room.to_owned(), b),
                None => kept.remove(room),
            };
        }
        self.inner.room_said.lock().unwrap_or_else(|e| e.into_inner()).remove(room);
        let waiting: Vec<SessionKey> = {
            let st = self.state();
            st.sessions
                .iter()
                .filter(|(k, e)| k.room_id == room && e.announced && !e.rec.queue.is_empty())
                .map(|(k, _)| k.clone())
                .collect()
        };
        for key in &waiting {
            self.spawn_drain(key);
        }
        self.room_usage(room)
    }

    /// Refuses a new turn of a session whose budget, or whose room's, is reached.
    pub(super) fn check_budget(&self, key: &SessionKey) -> Result<()> {
        let own = {
            let st = self.state();
            let e = st.announced(key)?;
            self.session_budget(e.rec.budget.as_ref()).map(|b| (state(&b, &e.rec.usage.totals), b))
        };
        if let Some((s, b)) = own.filter(|(s, _)| s.exhausted) {
            return Err(exhausted("session", &b, &s));
        }
        if let Some(b) = self.room_budget(&key.room_id) {
            let room = self.room_usage(&key.room_id)?;
            if room.state.exhausted {
                return Err(exhausted("room", &b, &room.state));
            }
        }
        Ok(())
    }

    /// After the session reported usage: a budget just reached is said once, and a running turn
    /// whose budget says so is canceled.
    pub(super) fn spawn_budget_check(&self, key: &SessionKey) {
        let this = self.clone();
        let key = key.clone();
        tokio::spawn(async move {
            if let Err(e) = this.budget_check(&key).await {
                tracing::debug!(session = %key, error = %e, "checking the budget failed");
            }
        });
    }

    async fn budget_check(&self, key: &SessionKey) -> Result<()> {
        // Each budget reached and not said yet, with where spending stands against it.
        let (session_reached, active) = {
            let st = self.state();
            let e = st.announced(key)?;
            let reached = self
                .session_budget(e.rec.budget.as_ref())
                .map(|b| {
                    let s = state(&b, &e.rec.usage.totals);
                    (b, s)
                })
                .filter(|(_, s)| s.exhausted && !e.rec.usage.exhausted_said);
            (reached, e.rec.session.active_turn_id.clone())
        };
        let room_reached = match self.room_budget(&key.room_id) {
            Some(b) => {
                let s = self.room_usage(&key.room_id)?.state;
                let fresh = s.exhausted
                    && self.inner.room_said.lock().unwrap_or_else(|e| e.into_inner()).insert(key.room_id.clone());
                fresh.then_some((b, s))
            }
            None => None,
        };
        let session_said = session_reached.is_some();
        let mut said = Vec::new();
        if let Some((b, s)) = session_reached {
            said.push((
                "the session's budget is reached: no new turn starts until it is raised".to_owned(),
                "session",
                b,
                s,
            ));
        }
        if let Some((b, s)) = room_reached {
            let message =
                format!("room {}'s budget is reached: no new turn starts in it until it is raised", key.room_id);
            said.push((message, "room", b, s));
        }
        if said.is_empty() {
            return Ok(());
        }
        let cancel = said.iter().any(|(_, _, b, _)| b.on_exhausted == Some(OnExhausted::Cancel));
        let _ = self
            .publish_with(key, Persist::Always, |b| {
                if session_said {
                    b.entry.rec.usage.exhausted_said = true;
                }
                for (message, scope, budget, state) in said {
                    b.emit(None, EventBody::Notice(NoticePayload { level: NoticeLevel::Warning, message }));
                    let scope = scope.to_owned();
                    b.emit(None, EventBody::BudgetExhausted(BudgetExhaustedPayload { scope, budget, state }));
                }
                Ok(())
            })
            .await?
            .durable()
            .await;
        if cancel && active.is_some() {
            self.cancel(key).await?;
        }
        Ok(())
    }
}

/// Where spending stands with no budget.
fn open(totals: &UsageTotals) -> BudgetState {
    BudgetState { exhausted: false, tokens: totals.tokens(), cost: totals.cost.as_ref().map(|c| c.amount) }
}

fn check(budget: Option<&Budget>) -> Result<()> {
    let Some(b) = budget else { return Ok(()) };
    if b.max_tokens.is_some_and(|t| t < 1) {
        return Err(ControllerError::InvalidInput("maxTokens must be at least 1".into()));
    }
    if b.max_cost.is_some_and(|c| !c.is_finite() || c <= 0.0) {
        return Err(ControllerError::InvalidInput("maxCost must be a number above 0".into()));
    }
    Ok(())
}

fn exhausted(scope: &str, budget: &Budget, state: &BudgetState) -> ControllerError {
    ControllerError::BudgetExhausted {
        message: format!("the {scope}'s budget is reached (raise it with PUT …/budget to go on)"),
        details: json!({ "scope": scope, "budget": budget, "state": state }),
    }
}
