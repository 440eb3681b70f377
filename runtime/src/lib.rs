//! Ensemble's runtime: sessions in rooms, the controller that owns them, the adapter interface
//! providers implement, the room event log with its SQLite store, and the room bus.
//!
//! This crate knows no HTTP and no agent dialect (see `ARCHITECTURE.md`). Its layers, bottom up:
//! the contract of `ensemble-core` (`model`, `event`, `goal`, `adapter`: named by their one path,
//! `ensemble_core::…`, never re-exported here) · `session` (the state machine) · `store`, `bus`,
//! `cursor` (the log) · `controller`.

pub mod actor;
pub mod bus;
pub mod controller;
pub mod cursor;
pub mod locks;
pub mod session;
pub mod store;
#[cfg(any(test, feature = "test-util"))]
pub mod test_util;
pub mod usage;
pub mod webhooks;

pub use controller::{Controller, ControllerConfig, ControllerError, StartSession, SubmitTurn, TurnAccepted};
