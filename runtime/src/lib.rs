//! Ensemble's runtime: sessions in rooms, the controller that owns them, the adapter interface
//! providers implement, the room event log with its SQLite store, and the room bus.
//!
//! This crate knows no HTTP and no agent dialect (see `ARCHITECTURE.md`).

pub mod adapter;
pub mod bus;
pub mod clock;
pub mod controller;
pub mod cursor;
pub mod event;
pub mod goals;
pub mod locks;
pub mod model;
pub mod session;
pub mod store;

pub use adapter::{Adapter, AdapterError, EventSink, Fact, SessionHandle, StartOutcome, TurnRequest};
pub use controller::{Controller, ControllerConfig, ControllerError, StartSession, SubmitTurn, TurnAccepted};
pub use event::{Event, EventBody};
pub use model::{Session, SessionKey, SessionStatus};
