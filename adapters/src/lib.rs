//! Ensemble's providers. Each module turns one agent dialect into runtime events; none knows HTTP.
//!
//! - [`scripted`]: the built-in deterministic agent (the server's default provider).
//! - [`codex`]: the real `codex app-server`, over [`jsonrpc`] on a [`process`] it supervises.

pub mod codex;
pub mod jsonrpc;
pub mod process;
pub mod scripted;
