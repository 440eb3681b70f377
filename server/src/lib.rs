//! Ensemble's server: axum REST + room WebSockets over the runtime controller. The only crate that
//! knows HTTP; it knows no agent dialect.
//!
//! Modules build on each other in one direction: wire types (`api`), errors, configuration and the
//! access rules at the bottom; the shared `state` on them; handlers (`routes`, `ws`) and `telemetry`
//! on the state; `router` puts them together with the OpenAPI document's static part (`openapi`);
//! `server` runs it.

pub mod access;
pub mod api;
pub mod cluster;
pub mod config;
pub mod datadir;
pub mod error;
pub mod isolation;
pub mod listener;
pub mod openapi;
pub mod os;
pub mod router;
pub mod routes;
pub mod runs;
pub mod security;
pub mod server;
pub mod state;
pub mod telemetry;
pub mod token_cli;
pub mod webhooks;
pub mod workspace;
pub mod ws;

pub use router::router;
pub use state::AppState;
