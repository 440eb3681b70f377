//! The providers' shared kit: what every provider that runs an agent process needs, written once.
//!
//! - [`jsonrpc`]: newline-delimited JSON-RPC over a child's stdio (bounded line decoder,
//!   correlation, deadlines, server requests; every pending call fails on EOF).
//! - [`process`]: process supervision (own process group, `PR_SET_PDEATHSIG`, TERM→KILL including
//!   descendants, explicit environment, the run tag). The crate's only `unsafe` code.
//! - [`goals`]: the provider-side goal engine (tracker, adoption, continuation attribution).
//! - [`provider`]: what a provider implements to be registered (options, build).

pub mod goals;
pub mod jsonrpc;
pub mod process;
pub mod provider;
