//! The runtime controller: owns every session, runs lifecycle operations under per-session locks,
//! folds adapter facts into session state and publishes them to the room log.
//!
//! Invariants:
//! - Every lifecycle operation on a session (start, resume, submit, cancel, close, release,
//!   disconnect, answer) runs under that session's lifecycle lock, acquired with a deadline.
//! - Session state changes only inside [`Controller::publish_with`], under the state mutex, together
//!   with the events that announce it; the events are enqueued to the store in the same critical
//!   section, so the room log order is the fold order.
//! - A failed start leaves nothing behind: the reservation is removed and nothing was persisted.
//! - Facts from a replaced, released or closed live session are dropped (generation check).
//!
//! The files split the controller by responsibility: [`publish`] holds the registry and the
//! publish path, [`fold`] the per-session entry and its batch, `provider_state` the store-backed
//! provider state all live sessions share, and `lifecycle`, `turns`, `sides`, `goals` and `queries`
//! add the operations of each kind to [`Controller`].

mod cluster;
mod config;
mod config_ops;
mod error;
mod fold;
mod goals;
mod lifecycle;
mod open_items;
mod provider_state;
mod publish;
mod queries;
mod sides;
mod store_watch;
mod turns;

pub use cluster::Location;
pub use config::{ClusterConfig, ControllerConfig, StartSession, SubmitTurn, TurnAccepted};
pub use error::ControllerError;
pub use fold::{Published, SideEventPage};
pub use goals::{GoalControl, provider_goal_status};
pub use publish::Controller;
pub use sides::SideOpenResult;
