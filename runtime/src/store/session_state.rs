//! What the store keeps of a session besides its record and its events: provider-private state
//! (e.g. the scripted provider's conversation) and the goal generation ledger.

use super::types::{LedgerKey, StoreError};
use ensemble_core::goal::{Binding, GoalIdentity};

/// The writes of session state.
pub(super) enum SessionStateOp {
    /// Sets one key of a session's provider-private state.
    SetProviderState { room_id: String, session_id: String, key: String, value: String },
    /// Binds a goal generation (first bind wins; another identity makes it ambiguous for good);
    /// answered with the binding as it is after the commit.
    GoalBind { key: LedgerKey, identity: GoalIdentity },
}

/// The reads of session state, as each engine answers them.
#[async_trait::async_trait]
pub(super) trait SessionStateReads {
    /// One key of a session's provider-private state.
    async fn provider_state(&self, room_id: &str, session_id: &str, key: &str) -> Result<Option<String>, StoreError>;
    /// The ledger's binding of a goal generation.
    async fn goal_lookup(&self, key: LedgerKey) -> Result<Option<Binding>, StoreError>;
}
