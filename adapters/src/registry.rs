//! Provider registration. A provider is one folder of this crate plus one line in the
//! `providers!` list at the bottom of this file: the line adds the provider's options to the
//! server's command line (flattened, each flag with an `ENSEMBLE_*` variable) and its adapters to
//! the controller. Nothing else in the workspace names a provider. What a provider implements to be
//! listed is [`Provider`].

use std::path::PathBuf;
use std::sync::Arc;

use ensemble_core::adapter::Adapter;

pub use crate::kit::provider::{Provider, ProviderEnv, ProviderError, SharedOptions};

/// Declares the registered providers: `field: Provider` per line.
macro_rules! providers {
    ($($(#[$doc:meta])* $field:ident: $provider:ty,)*) => {
        /// The options of every registered provider (flattened into the server's command line).
        #[derive(Clone, Debug, clap::Args)]
        pub struct ProviderOptions {
            #[command(flatten)]
            pub shared: SharedOptions,
            $(
                $(#[$doc])*
                #[command(flatten)]
                pub $field: <$provider as Provider>::Options,
            )*
        }

        impl ProviderOptions {
            /// Every registered provider's configuration files no agent may see
            /// ([`Provider::private_files`]).
            pub fn private_files(&self, data_dir: &std::path::Path) -> Vec<PathBuf> {
                let mut files = Vec::new();
                $(files.extend(<$provider as Provider>::private_files(&self.$field, data_dir));)*
                files
            }

            /// Every registered provider's own directories ([`Provider::private_dirs`]).
            pub fn private_dirs(&self, data_dir: &std::path::Path) -> Vec<PathBuf> {
                let mut dirs = Vec::new();
                $(dirs.extend(<$provider as Provider>::private_dirs(&self.$field, data_dir));)*
                dirs
            }

            /// Builds every registered provider's adapters, in registration order.
            /// `private_dirs`: the server's own directories, each provider's among them.
            pub async fn build(
                &self,
                data_dir: PathBuf,
                max_live_sessions: usize,
                server_files: Vec<PathBuf>,
                private_dirs: Vec<PathBuf>,
                isolation: crate::kit::sandbox::IsolationEnv,
            ) -> Result<Vec<Arc<dyn Adapter>>, ProviderError> {
                let mut env = self.shared.env(data_dir, max_live_sessions, server_files, private_dirs, isolation);
                let mut adapters: Vec<Arc<dyn Adapter>> = Vec::new();
                $(
                    for adapter in <$provider as Provider>::build(&self.$field, &env).await? {
                        let id = adapter.id().to_owned();
                        if env.taken_ids.contains(&id) {
                            return Err(ProviderError(format!("two providers are called `{id}`")));
                        }
                        env.taken_ids.push(id);
                        adapters.push(adapter);
                    }
                )*
                Ok(adapters)
            }
        }
    };
}

providers! {
    /// The built-in deterministic agent (the default provider).
    scripted: crate::scripted::Scripted,
    /// Scripted variants with broken side conversations, for tests (`--test-providers`).
    scripted_variants: crate::scripted::ScriptedTestVariants,
    /// The real `codex app-server`.
    codex: crate::codex::Codex,
    /// Agents that speak the Agent Client Protocol, from the providers file (`--providers`).
    acp: crate::acp::Acp,
}
