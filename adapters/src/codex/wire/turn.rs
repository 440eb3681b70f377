//! Turns: `turn/start|steer|interrupt`, the turn's lifecycle notifications, its errors, and the
//! notices codex sends about it (warnings, errors, reroutes, plans).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `turn/start`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct TurnStartParams {
    pub thread_id: String,
    pub input: Vec<UserInput>,
    /// Plan mode (experimental): the model may ask the user questions before it acts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collaboration_mode: Option<CollaborationMode>,
    /// The model for this turn and the next ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The reasoning effort for this turn and the next ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
}

/// What the user says.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum UserInput {
    Text {
        text: String,
        /// Spans of `text` that stand for something else (none from Ensemble).
        #[serde(default)]
        text_elements: Vec<Value>,
    },
    /// An image codex reads from its file system.
    LocalImage { path: String },
    /// An image by URL (a `data:` URL carries it whole: the server's copy is not in the box).
    /// codex may echo one without it.
    Image {
        #[serde(default)]
        url: String,
    },
    #[serde(other)]
    Unknown,
}

impl UserInput {
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into(), text_elements: Vec::new() }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct CollaborationMode {
    pub mode: ModeKind,
    pub settings: CollaborationSettings,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum ModeKind {
    Plan,
    Default,
}

/// A collaboration mode's settings (snake case on the wire). All three are always sent, `null`
/// when unknown.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct CollaborationSettings {
    pub model: Option<String>,
    pub reasoning_effort: Option<String>,
    pub developer_instructions: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct TurnStartResponse {
    #[serde(default)]
    pub turn: Option<Turn>,
}

/// `turn/steer`: more input for the running turn `expected_turn_id`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct TurnSteerParams {
    pub thread_id: String,
    pub expected_turn_id: String,
    pub input: Vec<UserInput>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct TurnSteerResponse {
    #[serde(default)]
    pub turn_id: String,
}

/// `turn/interrupt`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct TurnInterruptParams {
    pub thread_id: String,
    pub turn_id: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Turn {
    pub id: String,
    #[serde(default)]
    pub status: Option<TurnStatus>,
    /// Why a failed turn failed.
    #[serde(default)]
    pub error: Option<TurnError>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum TurnStatus {
    InProgress,
    Completed,
    Interrupted,
    Failed,
    #[serde(other)]
    Unknown,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct TurnError {
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub codex_error_info: Option<CodexErrorInfo>,
}

/// What kind of failure: a word (`"contextWindowExceeded"`), or one word with details
/// (`{"httpConnectionFailed": {"httpStatusCode": 401}}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum CodexErrorInfo {
    Kind(String),
    Detailed(BTreeMap<String, ErrorDetails>),
    /// A shape of a newer codex.
    Other(Value),
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ErrorDetails {
    #[serde(default)]
    pub http_status_code: Option<i64>,
}

/// `turn/started` and `turn/completed`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct TurnNotification {
    #[serde(default)]
    pub thread_id: String,
    pub turn: Turn,
}

/// `turn/plan/updated`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct TurnPlanUpdatedNotification {
    #[serde(default)]
    pub thread_id: String,
    #[serde(default)]
    pub turn_id: String,
    #[serde(default)]
    pub explanation: Option<String>,
    #[serde(default)]
    pub plan: Vec<TurnPlanStep>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct TurnPlanStep {
    #[serde(default)]
    pub step: String,
    /// `pending`, `inProgress` or `completed`, passed on as it is.
    #[serde(default)]
    pub status: String,
}

/// `error`: a turn's error, final or retried.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ErrorNotification {
    #[serde(default)]
    pub thread_id: String,
    #[serde(default)]
    pub turn_id: String,
    #[serde(default)]
    pub error: Option<TurnError>,
    /// Codex retries by itself.
    #[serde(default)]
    pub will_retry: bool,
}

/// `warning` and `guardianWarning`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct WarningNotification {
    #[serde(default)]
    pub thread_id: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
}

/// `configWarning` and `deprecationNotice`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SummaryNotification {
    #[serde(default)]
    pub summary: Option<String>,
}

/// `model/rerouted`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ModelReroutedNotification {
    #[serde(default)]
    pub thread_id: String,
    #[serde(default)]
    pub turn_id: String,
    #[serde(default)]
    pub from_model: String,
    #[serde(default)]
    pub to_model: String,
}
