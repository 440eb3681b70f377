//! Ensemble's server: axum REST + room WebSockets over the runtime controller. The only crate that
//! knows HTTP; it knows no agent dialect.

pub mod api;
pub mod app;
pub mod config;
pub mod error;
pub mod openapi;
pub mod routes;
pub mod runs;
pub mod security;
pub mod server;
pub mod telemetry;
pub mod workspace;
pub mod ws;

pub use app::{AppState, router};
