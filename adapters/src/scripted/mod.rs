//! The built-in `scripted` provider: a real in-process agent with deterministic behaviour, so the
//! server does real work with nothing installed and every runtime path is testable without codex.
//!
//! A turn's input is read line by line. Lines starting with `/` are directives (see [`Directive`]
//! and docs/providers.md); other lines are text the agent echoes back. The reply is streamed word by word
//! as `message.delta`s with a configurable delay, so cancel and reconnect can happen mid-stream.
//! The conversation is kept in the store (provider state), so `/history` works after a restart.

mod adapter;
mod config;
mod directives;
mod live;
mod modes;
mod options;
mod run;
mod transcript;
mod turn;

pub use adapter::ScriptedAdapter;
pub use config::{SCRIPTED, ScriptedConfig, SideBehavior};
pub use directives::{Directive, commands, parse};
pub use options::{Scripted, ScriptedOptions, ScriptedTestVariants, TestVariantOptions};

#[cfg(test)]
#[path = "scripted_tests.rs"]
mod tests;
