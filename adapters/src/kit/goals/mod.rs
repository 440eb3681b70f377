//! Goals on the provider side: the pure [`GoalTracker`] and the [`GoalEngine`] that wires it to
//! the controller's durable goal services and to the session's sink.

mod engine;
mod tracker;

pub use engine::GoalEngine;
pub use tracker::{Claim, GoalTracker, Install, MAX_BINDINGS, MAX_FINGERPRINTS_PER_TURN, Route};
