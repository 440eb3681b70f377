//! Ensemble's runtime: sessions in rooms, the controller that owns them, the adapter interface
//! providers implement, the room event log with its SQLite store, and the room bus.
//!
//! This crate knows no HTTP and no agent dialect (see `ARCHITECTURE.md`). Its layers, bottom up:
//! `model`, `event` and `goal` (wire and domain types) · `adapter` (the provider contract) ·
//! `session` (the state machine) · `store`, `bus`, `cursor` (the log) · `controller`.

pub mod adapter;
pub mod answers;
pub mod budget;
pub mod bus;
pub mod clock;
pub mod controller;
pub mod cursor;
pub mod event;
pub mod goal;
pub mod limits;
pub mod locks;
pub mod model;
#[cfg(feature = "schema")]
pub mod schema;
pub mod session;
pub mod shared_list;
pub mod shared_session;
pub mod store;
#[cfg(any(test, feature = "test-util"))]
pub mod test_util;

pub use adapter::{Adapter, AdapterError, Capabilities, EventSink, Fact, SessionHandle, StartOutcome, TurnRequest};
pub use controller::{Controller, ControllerConfig, ControllerError, StartSession, SubmitTurn, TurnAccepted};
pub use event::{Event, EventBody};
pub use model::{Session, SessionKey, SessionStatus};
