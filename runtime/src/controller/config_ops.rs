//! Modes and config options: what a client changes for a session's next turn (`PATCH …/config`).

use super::Controller;
use super::error::{ControllerError, Result};
use super::publish::Persist;
use ensemble_core::limits::{FieldError, check_text};
use ensemble_core::model::{ConfigChange, Session, SessionKey};

impl Controller {
    /// Changes the session's mode and config options. Checked against what the session offers
    /// (422 for an unknown mode, option or value); refused while a turn runs unless the agent can
    /// switch mid-turn (409); announced with `session.updated` (`config`).
    pub async fn configure(&self, key: &SessionKey, change: ConfigChange) -> Result<Session> {
        self.check_accepting()?;
        if change.mode.is_none() && change.options.is_empty() {
            return Err(ControllerError::InvalidInput("give a `mode` or `options` to change".into()));
        }
        if let Some(m) = &change.mode {
            check_text("mode", m).map_err(FieldError::in_body)?;
        }
        for (id, value) in &change.options {
            check_text("options", id).map_err(FieldError::in_body)?;
            check_text("options", value).map_err(FieldError::in_body)?;
        }
        let _guard = self.lock(key).await?;
        let session = self.snapshot(key)?;
        let adapter = self.adapter(&session.provider)?;
        let caps = adapter.capabilities();
        if !caps.config {
            return Err(ControllerError::ConfigUnsupported(format!(
                "provider `{}` has no modes or config options to change",
                session.provider
            )));
        }
        change.check_against(&session).map_err(ControllerError::UnknownConfig)?;
        if let Some(turn) = &session.active_turn_id
            && !caps.config_mid_turn
        {
            return Err(ControllerError::TurnActive(turn.clone()));
        }
        let live = self.ensure_live_locked(key, &adapter).await?;
        let patch = adapter.set_config(&live, change).await?;
        self.publish_with(key, Persist::Always, |b| {
            b.entry.rec.apply_patch(patch, b.now);
            b.updated("config");
            Ok(())
        })
        .await?
        .durable()
        .await?;
        self.snapshot(key)
    }
}
