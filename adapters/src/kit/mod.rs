//! The providers' shared kit: what every provider that runs an agent process needs, written once.
//!
//! - [`jsonrpc`]: newline-delimited JSON-RPC over a child's stdio (bounded line decoder,
//!   correlation, deadlines, server requests; every pending call fails on EOF).
//! - [`typed`]: methods as types (name, params, result) and typed calls over [`jsonrpc`].
//! - [`process`]: process supervision (own process group, `PR_SET_PDEATHSIG`, TERM→KILL including
//!   descendants, explicit environment, the run tag). The crate's only `unsafe` code.
//! - [`binary`]: finding the agent's binary (`which`) and checking its `--version`.
//! - [`availability`]: whether the provider can be used, with a re-probe after a start-up failure.
//! - [`auth_check`]: whether the agent needs a login, asked without a session and kept a while.
//! - [`stderr`]: the agent's stderr drained into the log, its last lines kept for error messages.
//! - [`ids`]: interaction request ids from an agent's JSON-RPC ids, safe for URLs.
//! - [`goals`]: the provider-side goal engine (tracker, adoption, continuation attribution).
//! - [`provider`]: what a provider implements to be registered (options, build).
//! - [`sandbox`]: the box a provider's sessions run in (its isolation, one session's sandbox).
//! - [`sessions`]: an adapter's live sessions by key (get, replace, remove, the live one or `NotLive`).

pub mod auth_check;
pub mod availability;
pub mod binary;
pub mod goals;
pub mod ids;
pub mod jsonrpc;
pub mod process;
pub mod provider;
pub mod sandbox;
pub mod sessions;
pub mod stderr;
pub mod typed;
