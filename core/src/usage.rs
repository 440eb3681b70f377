//! What sessions and rooms spend, and the budgets that limit it: the totals a turn's usage adds
//! up to, a session's and a room's usage as `GET …/usage` answers them, and where a budget stands.

use serde::{Deserialize, Serialize};

/// A cost as the agent reports it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Cost {
    /// The session's cumulative cost.
    pub amount: f64,
    /// An ISO 4217 code (`USD`) for money, or another unit (`credits`).
    pub currency: String,
}

/// Tokens and cost spent (cost where the agent reports it).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct UsageTotals {
    pub input_tokens: i64,
    /// Of the input, what the model had cached.
    pub cached_input_tokens: i64,
    pub output_tokens: i64,
    /// Of the output, the model's reasoning.
    pub reasoning_output_tokens: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<Cost>,
}

impl UsageTotals {
    pub fn add(&mut self, other: &UsageTotals) {
        self.input_tokens += other.input_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
        self.output_tokens += other.output_tokens;
        self.reasoning_output_tokens += other.reasoning_output_tokens;
        self.cost = match (self.cost.take(), &other.cost) {
            (Some(a), Some(b)) if a.currency == b.currency => {
                Some(Cost { amount: a.amount + b.amount, currency: a.currency })
            }
            // Costs in two currencies are not added: the first one kept stays.
            (Some(a), _) => Some(a),
            (None, b) => b.clone(),
        };
    }

    /// Tokens that count against a budget: what went in and what came out.
    pub fn tokens(&self) -> i64 {
        self.input_tokens + self.output_tokens
    }
}

/// A limit on what a session or a room spends. Tokens count what went in and what came out.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Budget {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schema(minimum = 1))]
    pub max_tokens: Option<i64>,
    /// In the agent's currency (the cost its reports carry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost: Option<f64>,
    /// What happens to the running turn when the budget is reached (default `finish`; no new
    /// turn starts either way).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_exhausted: Option<OnExhausted>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum OnExhausted {
    /// The running turn finishes.
    Finish,
    /// The running turn is canceled.
    Cancel,
}

/// Where a budget stands.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct BudgetState {
    pub exhausted: bool,
    /// Tokens spent (in and out).
    pub tokens: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
}

/// What one turn spent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TurnUsage {
    pub turn_id: String,
    pub usage: UsageTotals,
}

/// A session's usage (`GET …/sessions/{id}/usage`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionUsage {
    pub totals: UsageTotals,
    /// Its latest turns (at most 200), oldest first.
    pub turns: Vec<TurnUsage>,
    pub provider: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The session's budget (its own, else the server's default), and where it stands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    pub state: BudgetState,
}

/// What one provider and model spent in a room.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ProviderUsage {
    pub provider: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    pub usage: UsageTotals,
}

/// A room's usage (`GET /v1/rooms/{roomId}/usage`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct RoomUsage {
    pub totals: UsageTotals,
    /// By provider and model.
    pub providers: Vec<ProviderUsage>,
    /// By session.
    pub sessions: Vec<SessionUsageLine>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    pub state: BudgetState,
}

/// One session's line of a room's usage.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionUsageLine {
    pub session_id: String,
    pub usage: UsageTotals,
}
