//! Codex's models, reasoning efforts and collaboration modes as a session's `configOptions` and
//! `modes`. The choices come from `model/list`; what a client picks is kept in the session itself
//! (the controller folds the patch into it) and applied on the next `turn/start` — so it needs no
//! state here and survives a restart.

use std::sync::LazyLock;

use ensemble_core::model::{
    CollaborationMode, ConfigChange, ConfigChoice, ConfigOption, ModeInfo, Session, SessionModes, SessionPatch,
};
use ensemble_core::shared_list::SharedList;

use super::wire::Model;

/// The option ids.
pub(super) const MODEL: &str = "model";
pub(super) const EFFORT: &str = "reasoning_effort";
/// The mode ids (codex's collaboration modes).
const DEFAULT_MODE: &str = "default";
const PLAN_MODE: &str = "plan";

/// What a session offers given codex's models: the model, its reasoning efforts and the
/// collaboration mode, each with the session's current choice (`thread_model` is the model codex
/// runs the thread with, when the session did not pick one).
pub(super) fn offered(models: &[Model], session: &Session, thread_model: Option<&str>) -> SessionPatch {
    let picked = |id: &str| session.config_options.iter().find(|o| o.id == id).map(|o| o.current.clone());
    let default_model = models.iter().find(|m| m.is_default).map(|m| m.model.clone());
    let model = picked(MODEL)
        .or_else(|| session.settings.model.clone())
        .or_else(|| thread_model.map(str::to_owned))
        .or(default_model)
        .unwrap_or_default();
    let mut options = Vec::new();
    let visible: Vec<&Model> = models.iter().filter(|m| !m.hidden || m.model == model).collect();
    if !visible.is_empty() {
        options.push(ConfigOption {
            id: MODEL.into(),
            name: "Model".into(),
            description: None,
            category: Some("model".into()),
            current: model.clone(),
            choices: visible
                .iter()
                .map(|m| ConfigChoice {
                    value: m.model.clone(),
                    name: if m.display_name.is_empty() { m.model.clone() } else { m.display_name.clone() },
                    description: (!m.description.is_empty()).then(|| m.description.clone()),
                })
                .collect(),
        });
    }
    if let Some(m) = models.iter().find(|m| m.model == model)
        && !m.supported_reasoning_efforts.is_empty()
    {
        let supported = |e: &str| m.supported_reasoning_efforts.iter().any(|s| s.reasoning_effort == e);
        let current = picked(EFFORT)
            .filter(|e| supported(e))
            .or_else(|| session.settings.reasoning_effort.clone().filter(|e| supported(e)))
            .unwrap_or_else(|| m.default_reasoning_effort.clone());
        options.push(ConfigOption {
            id: EFFORT.into(),
            name: "Reasoning effort".into(),
            description: None,
            category: Some("thought_level".into()),
            current,
            choices: m
                .supported_reasoning_efforts
                .iter()
                .map(|e| ConfigChoice {
                    value: e.reasoning_effort.clone(),
                    name: e.reasoning_effort.clone(),
                    description: (!e.description.is_empty()).then(|| e.description.clone()),
                })
                .collect(),
        });
    }
    let current_mode = session.modes.as_ref().map(|m| m.current.clone()).unwrap_or_else(|| {
        match session.settings.collaboration_mode {
            Some(CollaborationMode::Plan) => PLAN_MODE.into(),
            _ => DEFAULT_MODE.into(),
        }
    });
    // Built once: every session offers the same two (shared, not copied).
    static MODES: LazyLock<SharedList<ModeInfo>> = LazyLock::new(|| {
        [
            ModeInfo { id: DEFAULT_MODE.into(), name: "Default".into(), description: None },
            ModeInfo {
                id: PLAN_MODE.into(),
                name: "Plan".into(),
                description: Some("plans first and may ask you questions before it acts".into()),
            },
        ]
        .into()
    });
    let modes = SessionModes { current: current_mode, available: MODES.clone() };
    SessionPatch { modes: Some(modes), config_options: Some(options.into()), ..SessionPatch::default() }
}

/// The session after a change (already checked against what it offers): the picks become current,
/// and a new model brings its own efforts.
pub(super) fn changed(models: &[Model], session: &Session, change: &ConfigChange) -> SessionPatch {
    let mut next = session.clone();
    next.config_options = change.picked(&session.config_options);
    if let (Some(mode), Some(modes)) = (&change.mode, next.modes.as_mut()) {
        modes.current = mode.clone();
    }
    offered(models, &next, None)
}

/// What a turn runs with: the model, effort and whether it plans, from the session's picks.
pub(super) struct TurnChoice {
    pub model: Option<String>,
    pub effort: Option<String>,
    pub plan: Option<bool>,
}

pub(super) fn for_turn(session: &Session) -> TurnChoice {
    let picked = |id: &str| session.config_options.iter().find(|o| o.id == id).map(|o| o.current.clone());
    TurnChoice {
        model: picked(MODEL).filter(|m| !m.is_empty()).or_else(|| session.settings.model.clone()),
        effort: picked(EFFORT).filter(|e| !e.is_empty()).or_else(|| session.settings.reasoning_effort.clone()),
        plan: session
            .modes
            .as_ref()
            .map(|m| m.current == PLAN_MODE)
            .or_else(|| session.settings.collaboration_mode.map(|m| m == CollaborationMode::Plan)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codex::wire::ReasoningEffortOption;

    fn model(name: &str, default: bool, efforts: &[&str]) -> Model {
        Model {
            id: name.into(),
            model: name.into(),
            display_name: name.to_uppercase(),
            is_default: default,
            default_reasoning_effort: efforts.first().map(|e| (*e).to_owned()).unwrap_or_default(),
            supported_reasoning_efforts: efforts
                .iter()
                .map(|e| ReasoningEffortOption { reasoning_effort: (*e).into(), description: String::new() })
                .collect(),
            ..Model::default()
        }
    }

    #[test]
    fn models_efforts_and_modes_are_offered_and_picked() {
        let models = [model("a", true, &["low", "high"]), model("b", false, &["medium"])];
        let mut s = Session::new_canonical("r", "s", "codex", "/", 0);
        let offer = offered(&models, &s, None);
        let opts = offer.config_options.clone().unwrap();
        assert_eq!((opts[0].id.as_str(), opts[0].current.as_str(), opts[0].choices.len()), ("model", "a", 2));
        assert_eq!((opts[1].id.as_str(), opts[1].current.as_str()), ("reasoning_effort", "low"));
        assert_eq!(offer.modes.as_ref().unwrap().current, "default");
        s.config_options = opts;
        s.modes = offer.modes;
        let change = ConfigChange { mode: Some("plan".into()), options: [("model".into(), "b".into())].into() };
        let after = changed(&models, &s, &change);
        let opts = after.config_options.unwrap();
        assert_eq!(opts[0].current, "b");
        assert_eq!((opts[1].current.as_str(), opts[1].choices.len()), ("medium", 1), "b's own efforts");
        s.config_options = opts;
        s.modes = after.modes;
        let t = for_turn(&s);
        assert_eq!((t.model.as_deref(), t.effort.as_deref(), t.plan), (Some("b"), Some("medium"), Some(true)));
    }
}
