//! A session's usage ledger, folded from its `usage.updated` events: what each turn spent (tokens
//! in, cached, out, reasoning; cost where the agent reports it) and the session's totals, by
//! provider and model. Agents report cumulative counts (codex per thread, the scripted agent per
//! session, an ACP agent its cost): a turn's share is the difference from the report before it. A
//! report below the one before (an agent that started counting again, e.g. in a new process)
//! starts a new baseline: all of it is new spending.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use ensemble_core::event::UsagePayload;
use ensemble_core::usage::Cost;
use ensemble_core::usage::{Budget, BudgetState, UsageTotals};

/// Turns a ledger keeps one by one (older ones are in the totals only).
pub const TURNS_KEPT: usize = 200;

/// What one turn spent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnSpend {
    pub turn_id: String,
    pub usage: UsageTotals,
}

/// A session's ledger.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ledger {
    /// The agent's latest cumulative report, which the next one is compared with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<UsagePayload>,
    #[serde(default)]
    pub totals: UsageTotals,
    #[serde(default, skip_serializing_if = "VecDeque::is_empty")]
    pub turns: VecDeque<TurnSpend>,
    /// Whether the budget's exhaustion was said (once, until the budget changes).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exhausted_said: bool,
}

fn grew(new: i64, old: i64) -> bool {
    new >= old
}

impl Ledger {
    pub fn is_empty(&self) -> bool {
        self.last.is_none() && self.turns.is_empty() && !self.exhausted_said
    }

    /// Folds one report, made during `turn`; returns what it added.
    pub fn record(&mut self, turn: Option<&str>, report: &UsagePayload) -> UsageTotals {
        let cumulative = self.last.as_ref().is_none_or(|l| {
            grew(report.input_tokens, l.input_tokens)
                && grew(report.output_tokens, l.output_tokens)
                && grew(report.cached_input_tokens, l.cached_input_tokens)
                && grew(report.reasoning_output_tokens, l.reasoning_output_tokens)
        });
        let base = if cumulative { self.last.clone().unwrap_or_default() } else { UsagePayload::default() };
        let cost = match (&report.cost, &base.cost) {
            (Some(now), Some(before)) if now.currency == before.currency && now.amount >= before.amount => {
                Some(Cost { amount: now.amount - before.amount, currency: now.currency.clone() })
            }
            (Some(now), _) => Some(now.clone()),
            (None, _) => None,
        };
        let added = UsageTotals {
            input_tokens: report.input_tokens - base.input_tokens,
            cached_input_tokens: report.cached_input_tokens - base.cached_input_tokens,
            output_tokens: report.output_tokens - base.output_tokens,
            reasoning_output_tokens: report.reasoning_output_tokens - base.reasoning_output_tokens,
            cost,
        };
        self.last = Some(report.clone());
        self.totals.add(&added);
        if let Some(turn) = turn {
            match self.turns.iter_mut().rev().find(|t| t.turn_id == turn) {
                Some(t) => t.usage.add(&added),
                None => {
                    self.turns.push_back(TurnSpend { turn_id: turn.to_owned(), usage: added.clone() });
                    while self.turns.len() > TURNS_KEPT {
                        self.turns.pop_front();
                    }
                }
            }
        }
        added
    }
}

/// Where `totals` stand against `budget`.
pub fn state(budget: &Budget, totals: &UsageTotals) -> BudgetState {
    let tokens_over = budget.max_tokens.is_some_and(|m| totals.tokens() >= m);
    let cost_over = match (budget.max_cost, &totals.cost) {
        (Some(max), Some(c)) => c.amount >= max,
        _ => false,
    };
    BudgetState {
        exhausted: tokens_over || cost_over,
        tokens: totals.tokens(),
        cost: totals.cost.as_ref().map(|c| c.amount),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(input: i64, output: i64, cost: Option<f64>) -> UsagePayload {
        UsagePayload {
            input_tokens: input,
            output_tokens: output,
            total_tokens: input + output,
            cost: cost.map(|amount| Cost { amount, currency: "USD".into() }),
            ..Default::default()
        }
    }

    #[test]
    fn cumulative_reports_are_spent_by_difference_and_kept_per_turn() {
        let mut l = Ledger::default();
        l.record(Some("t1"), &report(100, 10, Some(0.01)));
        l.record(Some("t1"), &report(150, 20, Some(0.02)));
        l.record(Some("t2"), &report(300, 50, Some(0.05)));
        assert_eq!(l.totals.tokens(), 350);
        let t1 = &l.turns[0].usage;
        assert_eq!((t1.input_tokens, t1.output_tokens), (150, 20));
        let t2 = &l.turns[1].usage;
        assert_eq!((t2.input_tokens, t2.output_tokens), (150, 30));
        assert!((t2.cost.as_ref().unwrap().amount - 0.03).abs() < 1e-9);
        assert!((l.totals.cost.as_ref().unwrap().amount - 0.05).abs() < 1e-9);
    }

    #[test]
    fn a_report_below_the_last_starts_a_new_baseline() {
        let mut l = Ledger::default();
        l.record(Some("t1"), &report(100, 10, None));
        // The agent counts again from nothing (a new process): all of it is new.
        l.record(Some("t2"), &report(40, 4, None));
        assert_eq!(l.totals.tokens(), 154);
    }

    #[test]
    fn a_budget_is_exhausted_by_tokens_or_cost() {
        let mut l = Ledger::default();
        l.record(Some("t1"), &report(90, 5, Some(0.5)));
        let tokens = Budget { max_tokens: Some(100), ..Default::default() };
        assert!(!state(&tokens, &l.totals).exhausted);
        l.record(Some("t2"), &report(95, 5, Some(1.0)));
        assert!(state(&tokens, &l.totals).exhausted);
        let cost = Budget { max_cost: Some(1.0), ..Default::default() };
        assert!(state(&cost, &l.totals).exhausted);
        assert!(!state(&Budget::default(), &l.totals).exhausted, "no limits, never exhausted");
    }
}
