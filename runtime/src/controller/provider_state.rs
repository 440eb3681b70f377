//! Provider state kept in the store: the one backend every live session's [`ProviderState`]
//! shares (the controller makes it when it starts).
//!
//! [`ProviderState`]: ensemble_core::adapter::ProviderState

use std::sync::Arc;

use async_trait::async_trait;

use crate::store::Store;
use ensemble_core::adapter::{StateBackend, StateError};
use ensemble_core::model::SessionKey;

/// Provider state kept in the store.
struct StoreState(Store);

/// The one provider-state backend every live session of `store` shares.
pub(super) fn provider_state_in(store: Store) -> Arc<dyn StateBackend> {
    Arc::new(StoreState(store))
}

#[async_trait]
impl StateBackend for StoreState {
    async fn get(&self, key: &SessionKey, name: &str) -> std::result::Result<Option<String>, StateError> {
        self.0.provider_state(&key.room_id, &key.session_id, name).await.map_err(|e| StateError(e.to_string()))
    }

    async fn set(&self, key: &SessionKey, name: &str, value: String) -> std::result::Result<(), StateError> {
        self.0
            .set_provider_state(&key.room_id, &key.session_id, name, value)
            .await
            .map_err(|e| StateError(e.to_string()))
    }
}
