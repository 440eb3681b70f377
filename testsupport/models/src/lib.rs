//! Reference models of what Ensemble promises, written independently of the code they check and
//! shared by the bounded property tests (run with the test suite) and the unbounded cargo-fuzz
//! targets in `fuzz/` (run by hand), so both check the same rules.
//!
//! - [`jsonrpc`]: the JSON-RPC line decoder (`ensemble_adapters::kit::jsonrpc`): framing, bounded
//!   memory, and what `decode` may make of a line.
//! - [`client_frames`]: the room WebSocket's answer to a client frame, on the wire.
//! - [`hosts`]: which addresses are loopback (the Host allowlist's ground truth).
//! - [`query`]: query-string names as a form parser decodes them, and which must be refused as
//!   token-looking (`token_in_query`).
//!
//! A violated rule panics with a message: a failing case to proptest, a crash to libFuzzer.

pub mod client_frames;
pub mod hosts;
pub mod jsonrpc;
pub mod query;
