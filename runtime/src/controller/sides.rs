//! Side conversations: capabilities, open (reserve, fork, validate, announce), expiry.

use std::sync::Arc;

use super::Controller;
use super::error::{ControllerError, Result};
use super::fold::{EarlyFacts, Entry, Visibility};
use super::publish::{NewProcess, Persist};
use crate::session::{Phase, SessionRecord};
use ensemble_core::adapter::{Adapter, SideOpen};
use ensemble_core::clock::new_id;
use ensemble_core::event::{EventBody, SessionStartedPayload};
use ensemble_core::limits::{FieldError, check_id};
use ensemble_core::model::{Scope, Session, SessionKey, SideCapabilities};

/// The outcome of opening a side conversation.
#[derive(Clone, Debug)]
pub struct SideOpenResult {
    pub session: Session,
    pub capabilities: SideCapabilities,
    /// The same `(source, side, requestId)` was opened before: nothing new happened.
    pub reopened: bool,
}

impl Controller {
    /// The side capabilities of the live adapter behind a session.
    pub async fn side_capabilities(&self, key: &SessionKey) -> Result<SideCapabilities> {
        let _guard = self.lock(key).await?;
        Ok(self.side_source_locked(key).await?.2)
    }

    pub(super) async fn side_source_locked(
        &self,
        key: &SessionKey,
    ) -> Result<(Session, Arc<dyn Adapter>, SideCapabilities)> {
        let source = self.snapshot(key)?;
        if source.scope == Scope::Side {
            return Err(ControllerError::SideUnsupported("a side conversation cannot be the source of another".into()));
        }
        let adapter = self.adapter(&source.provider)?;
        let capabilities =
            if adapter.capabilities().sides && self.phase(key)? == Phase::Live && adapter.is_live(&source) {
                adapter.side_capabilities(&source).await?
            } else {
                // Without the capability or a live context there is nothing to fork.
                SideCapabilities::default()
            };
        Ok((source, adapter, capabilities))
    }

    /// Opens a side conversation: an ephemeral fork of the source's live context.
    pub async fn open_side(
        &self,
        room_id: &str,
        source_id: &str,
        side_id: Option<&str>,
        request_id: &str,
    ) -> Result<SideOpenResult> {
        self.check_accepting()?;
        let (room, source_id) = (room_id, source_id);
        let side_id = side_id.map(str::to_owned).unwrap_or_else(new_id);
        check_id("roomId", room)?;
        check_id("sessionId", source_id)?;
        check_id("sideSessionId", &side_id).map_err(FieldError::in_body)?;
        check_id("requestId", request_id).map_err(FieldError::in_body)?;
        if source_id == side_id {
            return Err(ControllerError::SideConflict("a side conversation cannot be its own source".into()));
        }
        let source_key = SessionKey::new(room, source_id);
        let side_key = SessionKey::new(room, &side_id);
        let (_source_guard, _side_guard) =
            self.inner.locks.acquire_pair(&source_key, &side_key, self.inner.config.lock_timeout).await?;

        // Re-opening with the same source and request id returns the side; any other reuse conflicts.
        let existing = self.state().sessions.get(&side_key).map(|e| (e.rec.session.clone(), e.rec.phase));
        if let Some((existing, phase)) = existing {
            let same = existing.scope == Scope::Side
                && existing.source_session_id.as_deref() == Some(source_id)
                && existing.side_request_id.as_deref() == Some(request_id);
            if !same {
                return Err(ControllerError::SideConflict(format!("session `{side_id}` already exists")));
            }
            if phase == Phase::Completed {
                return Err(ControllerError::SideExpired);
            }
            let capabilities = self.side_source_locked(&source_key).await?.2;
            return Ok(SideOpenResult { session: existing, capabilities, reopened: true });
        }

        let (source, adapter, capabilities) = self.side_source_locked(&source_key).await?;
        if !adapter.capabilities().sides {
            return Err(ControllerError::SideUnsupported("this provider cannot open side conversations".into()));
        }
        if !capabilities.complete() {
            return Err(ControllerError::SideUnsupported(format!(
                "the live session cannot open a side conversation (capabilities: {capabilities:?})"
            )));
        }
        if source.active_turn_id.is_some() && !capabilities.active_source_turn {
            return Err(ControllerError::SideUnsupported("the source has an active turn".into()));
        }

        // Reserve the side before the provider call: events that race the fork are buffered for
        // the side, so they can never land on the source or in the room log.
        let now = self.inner.clock.now_ms();
        let mut side = source.clone();
        side.session_id = side_id.clone();
        side.root_session_id = side_id.clone();
        side.provider_session_id = None;
        side.scope = Scope::Side;
        side.source_session_id = Some(source_id.to_owned());
        side.side_request_id = Some(request_id.to_owned());
        side.resumable = false;
        side.active_turn_id = None;
        side.title = "Side conversation".into();
        side.visible = false;
        side.last_error = None;
        side.created_at_ms = now;
        side.updated_at_ms = now;
        // With several hosts, requests for the side reach this host (its id is new everywhere).
        // A claim left by a failed open heals itself: whoever asks finds no side and lets it go.
        self.claim_new(&side_key, true).await.map_err(|e| match e {
            ControllerError::SessionExists(id) => {
                ControllerError::SideConflict(format!("session `{id}` already exists"))
            }
            e => e,
        })?;
        let generation = self.next_generation();
        {
            let mut st = self.state();
            // A side shares its source's process, so only the session counts apply.
            self.check_capacity(&st, room, NewProcess::No)?;
            st.insert(
                side_key.clone(),
                Entry::new(
                    SessionRecord::new(side.clone(), Phase::Live),
                    generation,
                    Some(EarlyFacts::default()),
                    Visibility::Reserved,
                ),
            );
        }
        let opened = adapter
            .open_side(SideOpen {
                source: &source,
                side: &side,
                request_id,
                handle: self.handle(&side_key, generation),
            })
            .await;
        let opened = match opened {
            Ok(o) => o,
            Err(e) => {
                self.forget(&side_key);
                return Err(e.into());
            }
        };
        let identity = &opened.session;
        let valid = identity.session_id == side_id
            && identity.room_id == room
            && identity.provider == source.provider
            && identity.provider_session_id.as_deref().is_some_and(|p| !p.trim().is_empty());
        if !valid {
            // Never hand an untrusted identity (it could be the source, or another canonical
            // session) to close: only the exact side-scoped identity is ours to clean up.
            let exact_side = identity.session_id == side_id
                && identity.room_id == room
                && identity.scope == Scope::Side
                && identity.source_session_id.as_deref() == Some(source_id);
            if exact_side && let Err(e) = adapter.close(identity).await {
                tracing::warn!(side = %side_key, error = %e, "closing an invalid side failed");
            }
            self.forget(&side_key);
            return Err(ControllerError::SideConflict("the provider returned an invalid side session".into()));
        }
        if !opened.capabilities.complete() {
            if let Err(e) = adapter.close(identity).await {
                tracing::warn!(side = %side_key, error = %e, "closing an unsupported side failed");
            }
            self.forget(&side_key);
            return Err(ControllerError::SideUnsupported("the provider opened a side without every capability".into()));
        }
        let provider_session_id = identity.provider_session_id.clone();
        let ephemeral = opened.capabilities.ephemeral;
        let next = &self.inner.generations;
        self.publish_with(&side_key, Persist::IfChanged, |b| {
            // The side's invariants hold whatever the provider returned or buffered.
            let s = &mut b.entry.rec.session;
            s.provider_session_id = provider_session_id;
            s.scope = Scope::Side;
            s.source_session_id = Some(source_id.to_owned());
            s.side_request_id = Some(request_id.to_owned());
            s.root_session_id = side_id.clone();
            s.resumable = false;
            s.visible = false;
            s.updated_at_ms = b.now;
            b.entry.rec.refresh();
            b.entry.announced = true;
            let session = b.session().into();
            b.emit(None, EventBody::SessionStarted(SessionStartedPayload { session, ephemeral }));
            // Then everything that raced the open, in order; nothing overtakes session.started.
            let buffered = b.entry.buffer.take().map(EarlyFacts::into_facts).unwrap_or_default();
            b.apply_facts(buffered, next);
            Ok(())
        })
        .await?;
        Ok(SideOpenResult { session: self.snapshot(&side_key)?, capabilities: opened.capabilities, reopened: false })
    }

    /// Removes a session that was never announced, leaving no residue.
    pub(super) fn forget(&self, key: &SessionKey) {
        let mut st = self.state();
        if st.sessions.get(key).is_some_and(|e| !e.announced) {
            st.remove(key);
        }
    }

    /// Ends the live side conversations of a source.
    pub(super) async fn expire_sides(&self, source: &SessionKey, reason: &str) {
        let sides: Vec<(SessionKey, Session)> = {
            let st = self.state();
            st.sessions
                .iter()
                .filter(|(k, e)| {
                    k.room_id == source.room_id
                        && e.rec.session.scope == Scope::Side
                        && e.rec.session.source_session_id.as_deref() == Some(source.session_id.as_str())
                        && e.rec.phase != Phase::Completed
                })
                .map(|(k, e)| (k.clone(), e.rec.session.clone()))
                .collect()
        };
        for (key, side) in sides {
            if let Ok(adapter) = self.adapter(&side.provider)
                && adapter.is_live(&side)
                && let Err(e) = adapter.close(&side).await
            {
                tracing::warn!(side = %key, error = %e, "closing a side failed");
            }
            let stale = self.next_generation();
            let result = self
                .publish_with(&key, Persist::IfChanged, |b| {
                    b.detach(stale);
                    b.expire(reason)
                })
                .await;
            if let Err(e) = result {
                tracing::warn!(side = %key, error = %e, "expiring a side failed");
            }
        }
    }
}
