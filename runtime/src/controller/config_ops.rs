//! What a client changes of a session: its mode and config options for the next turn (`PATCH …/config`), and its title (`PATCH` on the session; a first turn names an untitled one).

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

    /// Renames the session (its `title`; not blank); announced with `session.updated`
    /// (`renamed`). Closed sessions can be renamed too: it is their record's name.
    pub async fn rename(&self, key: &SessionKey, title: &str) -> Result<Session> {
        let title = title.trim();
        if title.is_empty() {
            return Err(ControllerError::InvalidInput("`title` must not be blank".into()));
        }
        check_text("title", title).map_err(FieldError::in_body)?;
        let _guard = self.lock(key).await?;
        self.snapshot(key)?;
        self.publish_with(key, Persist::Always, |b| {
            b.entry.rec.session.title = title.to_owned();
            b.updated("renamed");
            Ok(())
        })
        .await?
        .durable()
        .await?;
        self.snapshot(key)
    }
}

/// A title from the first words of a turn's input (its first text, first line), for a session
/// started without one: at most [`AUTO_TITLE_CHARS`] characters, cut at a word with "…".
pub(super) fn title_from(input: &[ensemble_core::model::InputItem]) -> Option<String> {
    let text = input.iter().find_map(|i| match i {
        ensemble_core::model::InputItem::Text { text } => Some(text.as_str()),
        _ => None,
    })?;
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    // Control characters (bidi ones included) have no place in a name.
    let line: String = line.chars().map(|c| if c.is_control() || is_bidi_control(c) { ' ' } else { c }).collect();
    if line.chars().count() <= AUTO_TITLE_CHARS {
        return Some(line);
    }
    let cut: String = line.chars().take(AUTO_TITLE_CHARS).collect();
    let at_word =
        cut.rfind(char::is_whitespace).filter(|i| *i > AUTO_TITLE_CHARS / 2).map_or(cut.as_str(), |i| &cut[..i]);
    Some(format!("{}…", at_word.trim_end()))
}

/// The characters that reorder text (a name could otherwise read other than it is).
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// The longest title taken from a turn's words.
pub(super) const AUTO_TITLE_CHARS: usize = 60;

#[cfg(test)]
mod tests {
    use super::*;
    use ensemble_core::model::InputItem;

    fn text(t: &str) -> Vec<InputItem> {
        vec![InputItem::Text { text: t.into() }]
    }

    #[test]
    fn a_title_is_the_first_line_cut_at_a_word() {
        assert_eq!(title_from(&text("  fix the login bug\nand more")).as_deref(), Some("fix the login bug"));
        let long = "refactor the store so that every durable feature adds one trait implementation per engine";
        let t = title_from(&text(long)).unwrap();
        assert!(t.ends_with('…') && t.chars().count() <= AUTO_TITLE_CHARS + 1, "{t}");
        assert!(long.starts_with(t.trim_end_matches('…')), "{t}");
        assert_eq!(title_from(&text("\n\n")), None);
        assert_eq!(title_from(&[]), None);
        assert_eq!(title_from(&text("a\u{202e}b")).as_deref(), Some("a b"));
    }
}
