//! The scripted agent's modes and config options, so clients can exercise `PATCH …/config` with
//! nothing installed: a `voice` option (`plain`, or `upper`: replies in capitals) and the modes
//! `default` and `plan` (replies start with `(plan)`). A change applies from the next turn; like
//! most agents, the scripted one refuses to switch while a turn runs (409).

use std::sync::LazyLock;

use ensemble_runtime::model::{
    ConfigChange, ConfigChoice, ConfigOption, ModeInfo, Session, SessionModes, SessionPatch,
};
use ensemble_runtime::shared_list::SharedList;

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
    let current_voice = session
        .config_options
        .iter()
        .find(|o| o.id == VOICE)
        .map(|o| o.current.clone())
        .unwrap_or_else(|| "plain".into());
    // Built once: every session offers the same choices and modes (shared, not copied).
    static CHOICES: LazyLock<SharedList<ConfigChoice>> = LazyLock::new(|| {
        let choice =
            |value: &str, name: &str| ConfigChoice { value: value.into(), name: name.into(), description: None };
        [choice("plain", "Plain"), choice("upper", "Capitals")].into()
    });
    static MODES: LazyLock<SharedList<ModeInfo>> = LazyLock::new(|| {
        let mode = |id: &str, name: &str| ModeInfo { id: id.into(), name: name.into(), description: None };
        [mode("default", "Default"), mode("plan", "Plan")].into()
    });
    let voice = ConfigOption {
        id: VOICE.into(),
        name: "Voice".into(),
        description: Some("how the scripted agent writes its replies".into()),
        category: Some("model".into()),
        current: current_voice,
        choices: CHOICES.clone(),
    };
    let modes = SessionModes {
        current: session.modes.as_ref().map(|m| m.current.clone()).unwrap_or_else(|| "default".into()),
        available: MODES.clone(),
    };
    SessionPatch { modes: Some(modes), config_options: Some(vec![voice]), ..SessionPatch::default() }
}

/// The session after a change (already checked against what it offers).
pub(super) fn changed(session: &Session, change: &ConfigChange) -> SessionPatch {
    let mut next = session.clone();
    for option in &mut next.config_options {
        if let Some(v) = change.options.get(&option.id) {
            option.current = v.clone();
        }
    }
    if let (Some(m), Some(modes)) = (&change.mode, next.modes.as_mut()) {
        modes.current = m.clone();
    }
    offered(&next)
}
