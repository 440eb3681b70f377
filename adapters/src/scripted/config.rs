//! The scripted provider's configuration and its side-conversation behaviours.

use std::time::Duration;

/// The provider id.
pub const SCRIPTED: &str = "scripted";

#[derive(Clone, Debug)]
pub struct ScriptedConfig {
    /// The provider id (`scripted`; test variants use others).
    pub id: String,
    /// Pause between two streamed chunks (overridable per turn with `/slow MS`).
    pub chunk_delay: Duration,
    /// How side conversations behave (test variants break them on purpose).
    pub side: SideBehavior,
    /// How long a goal continuation waits for evidence of the operation it belongs to.
    pub goal_grace: Duration,
    /// The server's own files, which file directives never touch.
    pub guard: ensemble_files::Guard,
    /// The machine's side of isolation and the server's defaults: `/run` runs in the session's
    /// box.
    pub sandboxes: crate::kit::sandbox::IsolationEnv,
    /// How long a `/run` command may run before it is stopped.
    pub run_timeout: Duration,
    /// How much of a `/run` command's output is kept (the rest is counted).
    pub run_output_bytes: usize,
}

impl ScriptedConfig {
    /// The scripted provider's isolation: the server's defaults. Its sessions start no process:
    /// only what `/run` runs is boxed (and refused when no box can be made here).
    pub fn isolation(&self) -> ensemble_core::isolation::ProviderIsolation {
        self.sandboxes.for_provider(&Default::default(), Default::default(), false)
    }
}

impl Default for ScriptedConfig {
    fn default() -> Self {
        Self {
            id: SCRIPTED.to_owned(),
            chunk_delay: Duration::from_millis(20),
            side: SideBehavior::Full,
            goal_grace: Duration::from_millis(250),
            guard: ensemble_files::Guard::default(),
            sandboxes: crate::kit::sandbox::IsolationEnv::off(),
            run_timeout: Duration::from_secs(600),
            run_output_bytes: 64 * 1024,
        }
    }
}

/// How the scripted provider opens side conversations. Everything but `Full` exists to test the
/// controller's refusal and rollback paths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SideBehavior {
    /// All five capabilities; sides fork the live transcript.
    Full,
    /// Reports every capability but the model boundary.
    NoBoundary,
    /// The open fails at the provider.
    Fail,
    /// The open returns the *source's* identity instead of the side's.
    SourceIdentity,
    /// The open returns the side's identity without a provider session id.
    NoProviderId,
}

impl ScriptedConfig {
    /// The test variants `--test-providers` registers, by provider id.
    pub fn test_variants(chunk_delay: Duration) -> Vec<ScriptedConfig> {
        [
            ("scripted-side-limited", SideBehavior::NoBoundary),
            ("scripted-side-fail", SideBehavior::Fail),
            ("scripted-side-source-id", SideBehavior::SourceIdentity),
            ("scripted-side-no-thread", SideBehavior::NoProviderId),
        ]
        .into_iter()
        .map(|(id, side)| ScriptedConfig { id: id.to_owned(), chunk_delay, side, ..ScriptedConfig::default() })
        .collect()
    }
}
