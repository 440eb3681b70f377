//! Ensemble's contract: what the runtime, the providers and the HTTP edge agree on.
//!
//! `model`, `event`, `goal` and `usage` are the wire and domain types; `adapter` is the interface a
//! provider implements; `clock`, `limits`, `budget`, `answers`, `shared_list` and
//! `shared_session` are the small shared pieces. It knows no storage, no HTTP and no agent
//! dialect: `adapters/` depends on this crate alone, so Cargo keeps that boundary.

pub mod adapter;
pub mod answers;
pub mod budget;
pub mod clock;
pub mod event;
pub mod goal;
pub mod isolation;
pub mod limits;
pub mod model;
pub mod present;
#[cfg(feature = "schema")]
pub mod schema;
pub mod shared_list;
pub mod shared_session;
pub mod usage;
pub mod workspace;

pub use adapter::{Adapter, AdapterError, Capabilities, EventSink, Fact, SessionHandle, StartOutcome, TurnRequest};
pub use event::{Event, EventBody};
pub use model::{Session, SessionKey, SessionStatus};
