//! The scripted provider's registration: its options, and its test variants registered the same
//! way any provider is.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use ensemble_core::adapter::Adapter;

use super::adapter::ScriptedAdapter;
use super::config::ScriptedConfig;
use crate::kit::provider::{Provider, ProviderEnv, ProviderError};

/// The scripted provider's registration.
pub struct Scripted;

/// The scripted provider's options.
#[derive(Clone, Debug, clap::Args)]
pub struct ScriptedOptions {
    /// Pause between two chunks the scripted provider streams.
    #[arg(long, env = "ENSEMBLE_SCRIPTED_CHUNK_DELAY_MS", default_value_t = 20)]
    pub scripted_chunk_delay_ms: u64,

    /// How long a command the scripted agent runs (`/run COMMAND`, in the session's box) may run
    /// before it is stopped.
    #[arg(long, env = "ENSEMBLE_SCRIPTED_RUN_TIMEOUT_SECS", default_value_t = 600)]
    pub scripted_run_timeout_secs: u64,

    /// How much of a `/run` command's output is kept in its call (the rest is counted).
    #[arg(long, env = "ENSEMBLE_SCRIPTED_RUN_OUTPUT_BYTES", default_value_t = 64 * 1024)]
    pub scripted_run_output_bytes: usize,
}

#[async_trait]
impl Provider for Scripted {
    type Options = ScriptedOptions;

    async fn build(options: &ScriptedOptions, env: &ProviderEnv) -> Result<Vec<Arc<dyn Adapter>>, ProviderError> {
        let config = ScriptedConfig {
            chunk_delay: Duration::from_millis(options.scripted_chunk_delay_ms),
            goal_grace: env.goal_grace,
            guard: guard(env),
            sandboxes: env.isolation.clone(),
            run_timeout: Duration::from_secs(options.scripted_run_timeout_secs.max(1)),
            run_output_bytes: options.scripted_run_output_bytes.max(1024),
            ..ScriptedConfig::default()
        };
        Ok(vec![Arc::new(ScriptedAdapter::new(config, env.max_live_sessions))])
    }
}

/// The scripted provider's test variants (broken side conversations), registered like any
/// provider but only when asked for.
pub struct ScriptedTestVariants;

/// Options of [`ScriptedTestVariants`].
#[derive(Clone, Debug, clap::Args)]
pub struct TestVariantOptions {
    /// Also register the scripted provider's test variants (`scripted-side-limited`, `-fail`,
    /// `-source-id`, `-no-thread`: broken side conversations, for tests of clients and the server).
    #[arg(long, env = "ENSEMBLE_TEST_PROVIDERS")]
    pub test_providers: bool,
}

#[async_trait]
impl Provider for ScriptedTestVariants {
    type Options = TestVariantOptions;

    async fn build(options: &TestVariantOptions, env: &ProviderEnv) -> Result<Vec<Arc<dyn Adapter>>, ProviderError> {
        if !options.test_providers {
            return Ok(Vec::new());
        }
        let base = ScriptedConfig { goal_grace: env.goal_grace, ..ScriptedConfig::default() };
        Ok(ScriptedConfig::test_variants(base.chunk_delay)
            .into_iter()
            .map(|c| {
                let config = ScriptedConfig { goal_grace: base.goal_grace, guard: guard(env), ..c };
                Arc::new(ScriptedAdapter::new(config, env.max_live_sessions)) as Arc<dyn Adapter>
            })
            .collect())
    }
}

/// The server's files and directories, which the scripted agent's file directives refuse, as an
/// ACP agent's file requests do.
fn guard(env: &ProviderEnv) -> ensemble_files::Guard {
    ensemble_files::Guard::new(&env.server_files, &env.private_dirs)
}
