//! The scripted agent's modes and config options, so clients can exercise `PATCH …/config` with
//! nothing installed: a `voice` option (`plain`, or `upper`: replies in capitals) and the modes
//! `default` and `plan` (replies start with `(plan)`). A change applies from the next turn; like
//! most agents, the scripted one refuses to switch while a turn runs (409).

use std::sync::LazyLock;

use ensemble_core::model::{ConfigChange, ConfigChoice, ConfigOption, ModeInfo, Session, SessionModes, SessionPatch};
use ensemble_core::shared_list::SharedList;

const VOICE: &str = "voice";

/// How the agent speaks in a turn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Voice {
    pub upper: bool,
    pub plan: bool,
}

impl Voice {
    pub(super) fn of(session: &Session) -> Self {
        let voice = session.config_options.iter().find(|o| o.id == VOICE).map(|o| o.current.as_str());
        Self { upper: voice == Some("upper"), plan: session.modes.as_ref().is_some_and(|m| m.current == "plan") }
    }

    pub(super) fn say(self, line: String) -> String {
        let line = if self.upper { line.to_uppercase() } else { line };
        if self.plan { format!("(plan) {line}") } else { line }
    }
}

/// What a session offers, keeping its current picks.
pub(super) fn offered(session: &Session) -> SessionPatch {
    // Built once: every session offers the same modes, and its options are one of two lists
    // (shared, not copied).
    static MODES: LazyLock<SharedList<ModeInfo>> = LazyLock::new(|| {
        let mode = |id: &str, name: &str| ModeInfo { id: id.into(), name: name.into(), description: None };
        [mode("default", "Default"), mode("plan", "Plan")].into()
    });
    static PLAIN: LazyLock<SharedList<ConfigOption>> = LazyLock::new(|| voice_options("plain"));
    static UPPER: LazyLock<SharedList<ConfigOption>> = LazyLock::new(|| voice_options("upper"));
    let current_voice = session.config_options.iter().find(|o| o.id == VOICE).map(|o| o.current.as_str());
    let config_options = match current_voice {
        None | Some("plain") => PLAIN.clone(),
        Some("upper") => UPPER.clone(),
        Some(other) => voice_options(other),
    };
    let modes = SessionModes {
        current: session.modes.as_ref().map(|m| m.current.clone()).unwrap_or_else(|| "default".into()),
        available: MODES.clone(),
    };
    SessionPatch { modes: Some(modes), config_options: Some(config_options), ..SessionPatch::default() }
}

/// The options with `current` as the voice.
fn voice_options(current: &str) -> SharedList<ConfigOption> {
    static CHOICES: LazyLock<SharedList<ConfigChoice>> = LazyLock::new(|| {
        let choice =
            |value: &str, name: &str| ConfigChoice { value: value.into(), name: name.into(), description: None };
        [choice("plain", "Plain"), choice("upper", "Capitals")].into()
    });
    [ConfigOption {
        id: VOICE.into(),
        name: "Voice".into(),
        description: Some("how the scripted agent writes its replies".into()),
        category: Some("model".into()),
        current: current.into(),
        choices: CHOICES.clone(),
    }]
    .into()
}

/// The session after a change (already checked against what it offers).
pub(super) fn changed(session: &Session, change: &ConfigChange) -> SessionPatch {
    let mut next = session.clone();
    next.config_options = change.picked(&session.config_options);
    if let (Some(m), Some(modes)) = (&change.mode, next.modes.as_mut()) {
        modes.current = m.clone();
    }
    offered(&next)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn voice_of(options: &[ConfigOption]) -> &str {
        options.iter().find(|o| o.id == VOICE).map(|o| o.current.as_str()).unwrap_or("-")
    }

    #[test]
    fn a_change_picks_new_values_and_leaves_the_shared_offer_as_it_was() {
        let mut s = Session::new_canonical("r", "s", "scripted", "/", 0);
        let first = offered(&s).config_options.unwrap();
        assert_eq!((voice_of(&first), first[0].choices.len()), ("plain", 2));
        s.config_options = first.clone();
        s.modes = offered(&s).modes;

        let change = ConfigChange { mode: Some("plan".into()), options: [(VOICE.into(), "upper".into())].into() };
        let after = changed(&s, &change);
        assert_eq!(voice_of(after.config_options.as_deref().unwrap()), "upper");
        assert_eq!(after.modes.as_ref().unwrap().current, "plan");
        // The list every fresh session shares is not the one that changed.
        assert_eq!(voice_of(&first), "plain");
        assert_eq!(
            voice_of(&offered(&Session::new_canonical("r", "t", "scripted", "/", 0)).config_options.unwrap()),
            "plain"
        );

        s.config_options = after.config_options.unwrap();
        let back = changed(&s, &ConfigChange { mode: None, options: [(VOICE.into(), "plain".into())].into() });
        assert_eq!(back.config_options.unwrap(), first, "back to the shared plain offer");
        assert_eq!(Voice::of(&s), Voice { upper: true, plan: false }, "a turn reads the voice from the options");
    }
}
