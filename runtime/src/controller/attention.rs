//! Attention: an interaction unanswered for `attention_after` is said once, as a
//! `session.needs_attention` event (webhooks and notifications debounce on it). One answered
//! sooner is never said, and nothing is said twice for one request.

use super::Controller;
use super::publish::Persist;
use ensemble_core::event::{EventBody, SessionNeedsAttentionPayload};
use ensemble_core::model::SessionKey;

impl Controller {
    /// After the delay, says that `request` needs attention if it is still waiting.
    pub(super) fn spawn_attention(&self, key: &SessionKey, request: String) {
        let Some(after) = self.inner.config.attention_after else { return };
        // Holds no strong reference while it waits: a server shutting down is not kept alive.
        let weak = std::sync::Arc::downgrade(&self.inner);
        let key = key.clone();
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            let Some(inner) = weak.upgrade() else { return };
            let this = Controller { inner };
            let published = this
                .publish_with(&key, Persist::Always, |b| {
                    let Some(p) = b.entry.rec.pending_interaction(&request) else { return Ok(()) };
                    let body = EventBody::SessionNeedsAttention(SessionNeedsAttentionPayload {
                        request_id: request.clone(),
                        kind: p.request.kind,
                        title: p.request.title.clone(),
                        requested_at_ms: p.requested_at_ms,
                    });
                    let turn = p.turn_id.clone();
                    b.emit(turn, body);
                    Ok(())
                })
                .await;
            if let Err(e) = published {
                tracing::debug!(session = %key, error = %e, "saying an interaction needs attention failed");
            }
        });
    }
}
