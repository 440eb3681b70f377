//! Ensemble's providers. Each folder turns one agent dialect into runtime events; none knows HTTP.
//!
//! - [`scripted`]: the built-in deterministic agent (the server's default provider).
//! - [`codex`]: the real `codex app-server`, over the [`kit`]'s JSON-RPC on a process it supervises.
//! - [`acp`]: agents that speak the Agent Client Protocol, configured in a providers file.
//! - [`kit`]: what providers share (JSON-RPC over stdio, process supervision, the goal engine).
//! - [`registry`]: the list of providers, their options and how each is built.

pub mod acp;
pub mod codex;
pub mod kit;
pub mod registry;
pub mod scripted;

pub use registry::{ProviderEnv, ProviderError, ProviderOptions};
