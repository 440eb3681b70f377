//! The wire-shaped session model of the contract (`Session`, its settings and status).
//!
//! These types serialise exactly as `API.md` describes them; the status and the submit availability
//! are *derived* from the session's lifecycle phase, its active turn and its pending interactions
//! (see `ensemble_runtime::session`), never set from two places.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::shared_list::SharedList;

/// Where a session sits: an ordinary (canonical) session, or an ephemeral side conversation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    #[default]
    Canonical,
    Side,
}

// The runtime derives it (`ensemble_runtime::session::SessionRecord::refresh`).
/// The status clients see, derived from the session's lifecycle, its running turn and its pending
/// interactions (never set directly).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum SessionStatus {
    Starting,
    Ready,
    Working,
    Waiting,
    Disconnected,
    Failed,
    Completed,
}

impl SessionStatus {
    pub const ALL: [SessionStatus; 7] =
        [Self::Starting, Self::Ready, Self::Working, Self::Waiting, Self::Disconnected, Self::Failed, Self::Completed];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Starting => "starting",
            Self::Ready => "ready",
            Self::Working => "working",
            Self::Waiting => "waiting",
            Self::Disconnected => "disconnected",
            Self::Failed => "failed",
            Self::Completed => "completed",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum SubmitState {
    Available,
    Blocked,
}

/// Whether a turn may be submitted now, and why not.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SubmitAvailability {
    pub state: SubmitState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl SubmitAvailability {
    pub fn available() -> Self {
        Self { state: SubmitState::Available, reason: None }
    }
    pub fn blocked(reason: &str) -> Self {
        Self { state: SubmitState::Blocked, reason: Some(reason.to_owned()) }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum AuthState {
    Authenticated,
    AuthRequired,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub enum ApprovalPolicy {
    #[serde(rename = "untrusted")]
    Untrusted,
    #[serde(rename = "on-request")]
    OnRequest,
    #[serde(rename = "never")]
    Never,
}

impl ApprovalPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Untrusted => "untrusted",
            Self::OnRequest => "on-request",
            Self::Never => "never",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub enum SandboxMode {
    #[serde(rename = "read-only")]
    ReadOnly,
    #[serde(rename = "workspace-write")]
    WorkspaceWrite,
    #[serde(rename = "danger-full-access")]
    DangerFullAccess,
}

impl SandboxMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::WorkspaceWrite => "workspace-write",
            Self::DangerFullAccess => "danger-full-access",
        }
    }
}

/// Per-session settings, as submitted at start.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionSettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schema(max_length = 4096))]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schema(max_length = 4096))]
    pub reasoning_effort: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_policy: Option<ApprovalPolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxMode>,
    /// `plan`: the agent plans (and may ask the user questions) before it acts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collaboration_mode: Option<CollaborationMode>,
    /// `true`: queued follow-ups go on after a turn that failed too (by default the queue waits
    /// for a turn that completed or was canceled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_after_failure: Option<bool>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum CollaborationMode {
    Default,
    Plan,
}

impl CollaborationMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::Plan => "plan",
        }
    }
}

/// The agent's modes (e.g. ACP session modes, codex's collaboration modes): the current one and
/// those a client may switch to with `PATCH …/config`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionModes {
    pub current: String,
    // Shared: a provider offers the same modes to each session, and a session is copied and
    // serialised several times per request (the record, the snapshot, the events).
    #[cfg_attr(feature = "schema", schema(value_type = Vec<ModeInfo>))]
    pub available: SharedList<ModeInfo>,
}

/// One mode of an agent.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ModeInfo {
    pub id: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A setting of the agent a client may change for the next turn (`PATCH …/config`): the model, the
/// reasoning effort, an approval preset, …
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ConfigOption {
    pub id: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// What the option is about, when the agent says (`model`, `thought_level`, `mode`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// The current value (one of the choices' values).
    pub current: String,
    // Shared, as the modes above.
    #[cfg_attr(feature = "schema", schema(value_type = Vec<ConfigChoice>))]
    pub choices: SharedList<ConfigChoice>,
}

/// One value a config option may take.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ConfigChoice {
    pub value: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A session as the contract shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Session {
    pub room_id: String,
    pub session_id: String,
    pub root_session_id: String,
    pub provider: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_session_id: Option<String>,
    pub scope: Scope,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_request_id: Option<String>,
    pub status: SessionStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_turn_id: Option<String>,
    pub submit_availability: SubmitAvailability,
    pub resumable: bool,
    /// Why the session cannot be resumed, when its provider says (e.g. an ACP agent without
    /// `session/load`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_unsupported_reason: Option<String>,
    pub live: bool,
    pub visible: bool,
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_state: Option<AuthState>,
    /// How to authenticate when `authState` is `auth_required`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_message: Option<String>,
    pub cwd: String,
    /// Where the session works: a git worktree of its own, or the directory it was given; with
    /// checkpoints around every turn when that is in a git work tree.
    // Boxed, both: most sessions have neither, and a session is copied often (a word each, not
    // a hundred bytes, in every one; the memory bench's RSS per idle session showed it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<Box<SessionWorkspace>>,
    /// The box its agent runs in: what it may reach and its limits (absent for a provider that
    /// confines nothing). Boxed for the same reason as the workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<Box<crate::isolation::Isolation>>,
    /// The session this one was forked from (`POST …/fork`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<Box<ForkedFrom>>,
    pub settings: SessionSettings,
    /// The agent's modes, when it has any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modes: Option<SessionModes>,
    /// The settings a client may change for the next turn (`PATCH …/config`).
    // Shared, as the modes: a session is copied and serialised several times per request, and
    // the sessions of one provider mostly offer the same options with the same picks.
    #[serde(default, skip_serializing_if = "SharedList::is_empty")]
    #[cfg_attr(feature = "schema", schema(value_type = Vec<ConfigOption>))]
    pub config_options: SharedList<ConfigOption>,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
}

impl Session {
    /// A canonical session as a start creates it (status `starting`, resumable, visible).
    pub fn new_canonical(room_id: &str, session_id: &str, provider: &str, cwd: &str, now_ms: i64) -> Self {
        Session {
            room_id: room_id.to_owned(),
            session_id: session_id.to_owned(),
            root_session_id: session_id.to_owned(),
            provider: provider.to_owned(),
            provider_session_id: None,
            scope: Scope::Canonical,
            source_session_id: None,
            side_request_id: None,
            status: SessionStatus::Starting,
            active_turn_id: None,
            submit_availability: SubmitAvailability::blocked("starting"),
            resumable: true,
            resume_unsupported_reason: None,
            live: false,
            visible: true,
            title: DEFAULT_TITLE.into(),
            last_error: None,
            auth_state: None,
            auth_message: None,
            cwd: cwd.to_owned(),
            workspace: None,
            isolation: None,
            forked_from: None,
            settings: SessionSettings::default(),
            modes: None,
            config_options: SharedList::default(),
            created_at_ms: now_ms,
            updated_at_ms: now_ms,
        }
    }

    pub fn key(&self) -> SessionKey {
        SessionKey::new(&self.room_id, &self.session_id)
    }

    pub fn is_side(&self) -> bool {
        self.scope == Scope::Side
    }
}

/// Changes to a session's provider-owned metadata (what a provider learns and reports).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionPatch {
    pub provider_session_id: Option<String>,
    pub auth_state: Option<AuthState>,
    pub auth_message: Option<String>,
    pub title: Option<String>,
    pub modes: Option<SessionModes>,
    pub config_options: Option<SharedList<ConfigOption>>,
    /// The provider cannot resume this session, and why.
    pub not_resumable: Option<String>,
}

/// What a client asks to change with `PATCH …/config`: a mode, and option values by id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConfigChange {
    pub mode: Option<String>,
    pub options: std::collections::BTreeMap<String, String>,
}

impl ConfigChange {
    /// `options` with this change's values made current (a new list: the old one may be shared).
    pub fn picked(&self, options: &[ConfigOption]) -> SharedList<ConfigOption> {
        options
            .iter()
            .map(|o| {
                let mut o = o.clone();
                if let Some(v) = self.options.get(&o.id) {
                    o.current = v.clone();
                }
                o
            })
            .collect()
    }

    /// Checks a change against what a session offers: `Err(message)` names the unknown mode,
    /// option or value (answered 422). Every provider checks the same way.
    pub fn check_against(&self, session: &Session) -> Result<(), String> {
        if let Some(mode) = &self.mode {
            let known = session.modes.as_ref().is_some_and(|m| m.available.iter().any(|a| a.id == *mode));
            if !known {
                return Err(format!("the session has no mode `{mode}`"));
            }
        }
        for (id, value) in &self.options {
            let Some(option) = session.config_options.iter().find(|o| o.id == *id) else {
                return Err(format!("the session has no config option `{id}`"));
            };
            if !option.choices.iter().any(|c| c.value == *value) {
                return Err(format!("`{value}` is not a value of the config option `{id}`"));
            }
        }
        Ok(())
    }
}

/// A session's identity inside the server: (room, session id).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionKey {
    pub room_id: String,
    pub session_id: String,
}

impl SessionKey {
    pub fn new(room_id: &str, session_id: &str) -> Self {
        Self { room_id: room_id.to_owned(), session_id: session_id.to_owned() }
    }
}

/// Most entries a table keyed by session is made ready for up front ([`session_table`]).
pub const SESSION_TABLE_PRESIZE_MAX: usize = 1 << 16;

/// A table keyed by session, made ready for `limit` entries (the limit on what it holds, up to
/// [`SESSION_TABLE_PRESIZE_MAX`]). Grown from empty, each doubling of the controller's and the
/// scripted provider's tables allocated a new one, hashed every key again (two strings behind
/// pointers) and freed the old one, which stayed in the server's memory: with many sessions
/// the server's RSS grew by megabytes over tables made ready (docs/performance/log.md).
pub fn session_table<V>(limit: usize) -> HashMap<SessionKey, V> {
    HashMap::with_capacity(limit.min(SESSION_TABLE_PRESIZE_MAX))
}

impl std::fmt::Display for SessionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.room_id, self.session_id)
    }
}

/// One item of turn input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum InputItem {
    Text {
        /// Not blank.
        #[cfg_attr(feature = "schema", schema(pattern = r"\S"))]
        text: String,
    },
    /// An image: sent as `data` (base64) with its `mimeType`, or named by `path` inside the
    /// session's workspace. The server keeps it (`attachment`) and never repeats `data`: in
    /// events an image has `mimeType`, `bytes` and `attachment` (read it at
    /// `GET …/sessions/{sessionId}/attachments/{attachment}`).
    Image {
        /// The image, base64 (standard alphabet, padded); with `mimeType`. Never in events.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<String>,
        /// `image/png`, `image/jpeg`, `image/gif` or `image/webp` (checked against the bytes).
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Instead of `data`: a file inside the session's workspace (relative to its cwd, or absolute).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<String>,
        /// A name to show for it (a pasted image's file name).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// Set by the server: the image's id among the session's attachments.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        attachment: Option<String>,
        /// Set by the server: the image's size.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bytes: Option<u64>,
    },
    /// A file inside the session's workspace, given to the agent as a link or with its content,
    /// as the agent takes them. In events it has its `bytes` and `mimeType` too.
    File {
        /// Inside the session's workspace: relative to its cwd, or absolute.
        path: String,
        /// Set by the server: the file's size when the turn started.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bytes: Option<u64>,
        /// Set by the server: `text/plain` for a UTF-8 file, an image's own type for an image,
        /// else `application/octet-stream`.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
}

impl InputItem {
    /// The item's text (empty for an image or a file).
    pub fn text(&self) -> &str {
        match self {
            Self::Text { text } => text,
            Self::Image { .. } | Self::File { .. } => "",
        }
    }

    /// `text`, `image` or `file`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Text { .. } => "text",
            Self::Image { .. } => "image",
            Self::File { .. } => "file",
        }
    }
}

/// The goal of a session (contract §Goal).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Goal {
    pub objective: String,
    pub status: GoalStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_budget: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_used: Option<i64>,
    pub operation_id: String,
    pub revision: i64,
    pub repair_epoch: i64,
    pub origin: GoalOrigin,
    pub updated_at_ms: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum GoalStatus {
    Active,
    Paused,
    Blocked,
    Complete,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum GoalOrigin {
    User,
    Provider,
}

/// The side-conversation capabilities of the live adapter behind one session. A side can only be
/// opened when all five hold; a provider name alone never implies them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SideCapabilities {
    /// The exact live runtime behind the session supports side conversations.
    pub supported: bool,
    /// It can fork a source whose turn is still running.
    pub active_source_turn: bool,
    /// The fork is not durable.
    pub ephemeral: bool,
    /// Inherited turns are visible to the model but are not side history.
    pub hide_inherited_turns: bool,
    /// An explicit boundary, visible to the model, separates inherited context from side input.
    pub model_boundary_injected: bool,
}

impl SideCapabilities {
    pub fn all() -> Self {
        Self {
            supported: true,
            active_source_turn: true,
            ephemeral: true,
            hide_inherited_turns: true,
            model_boundary_injected: true,
        }
    }

    /// All five hold.
    pub fn complete(&self) -> bool {
        self.supported
            && self.active_source_turn
            && self.ephemeral
            && self.hide_inherited_turns
            && self.model_boundary_injected
    }
}

/// What a provider can do (`GET /v1/providers`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ProviderCapabilities {
    pub resume: bool,
    pub side_conversations: bool,
    pub goals: bool,
    pub interactive: bool,
    pub steer: bool,
    /// Modes and config options can be changed (`PATCH …/config`).
    #[serde(default)]
    pub config: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ProviderInfo {
    pub id: String,
    pub display_name: String,
    pub available: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable_reason: Option<String>,
    pub capabilities: ProviderCapabilities,
    /// The provider of sessions started without one (`--default-provider`).
    #[serde(default)]
    pub default: bool,
    /// What the agent said about itself when it last started (ACP agents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentInfo>,
    /// Whether the provider's agent can call its model, as the newer of two answers found it:
    /// the agent asked without a session (codex; at most once a minute) and its latest session's
    /// start. `auth_required` means it needs a login first, see `authMessage`; its sessions refuse
    /// turns with 409 `auth_required` until then. Absent when neither has answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_state: Option<AuthState>,
    /// How to log in, when `authState` is `auth_required`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_message: Option<String>,
    /// The command that logs in, when the message names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub login_command: Option<String>,
    /// The box its sessions run in (with a warning when isolation is off, and why this machine
    /// cannot give it when it cannot).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<crate::isolation::ProviderIsolation>,
}

/// A follow-up waiting for the session's running turn to end (`POST …/turns` with `queue: true`).
/// It starts, as the turn `turnId`, once the turns before it have ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct QueuedTurn {
    /// The id the turn will have.
    pub turn_id: String,
    /// As the turn will carry it (images kept, as in `turn.started`).
    pub input: Vec<InputItem>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_submit_id: Option<String>,
    pub queued_at_ms: i64,
}

/// A session an agent keeps (its own earlier sessions, as ACP's `session/list` says), which a
/// session of a room can continue (`providerSessionId` in `POST …/sessions`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ProviderSession {
    /// The agent's id of it.
    pub provider_session_id: String,
    pub cwd: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// When it last changed, as the agent says (ISO 8601).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
}

/// A page of an agent's sessions.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ProviderSessionList {
    pub data: Vec<ProviderSession>,
    /// The `cursor` of the next page, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}

/// The title of a session started without one, until its first turn names it.
pub const DEFAULT_TITLE: &str = "New session";

/// A fork's lineage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ForkedFrom {
    pub session_id: String,
    /// The source's turn the fork goes through.
    pub turn_id: String,
    /// The checkpoint (after that turn) its workspace starts from.
    pub checkpoint: String,
}

/// What kind of workspace a session has.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum WorkspaceKind {
    /// The directory the session was given (today's behaviour).
    #[default]
    Dir,
    /// A git worktree made for the session, on a branch of its own.
    Worktree,
}

/// A session's workspace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionWorkspace {
    pub kind: WorkspaceKind,
    /// The repository: for a worktree the one it was made from; for a dir the work tree's top.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// The commit the worktree started from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_commit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The top of the work tree the checkpoints take (a worktree's own directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The work tree's git dir, as found when the session started (the server's git uses it,
    /// never what the work tree's `.git` says later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_dir: Option<String>,
    /// The repository's common dir (objects, refs, configuration), as found when it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub common_dir: Option<String>,
    /// Whether the working tree is checkpointed around every turn.
    pub checkpoints: bool,
}

/// The command to run that an auth message quotes (its first `` `…` `` span), e.g. `codex login`.
pub fn login_command(auth_message: &str) -> Option<String> {
    auth_message.split('`').nth(1).filter(|c| !c.trim().is_empty()).map(str::to_owned)
}

/// What an agent advertised in its handshake (ACP `initialize`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AgentInfo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The protocol version it speaks.
    pub protocol_version: u16,
    /// `session/load`: sessions can be resumed with their history.
    pub load_session: bool,
    /// `session/resume`: sessions can be resumed without replaying history.
    pub resume_session: bool,
    /// `session/close`.
    pub close_session: bool,
    /// Prompts may carry images.
    pub prompt_image: bool,
    /// Prompts may carry audio.
    pub prompt_audio: bool,
    /// MCP servers over HTTP can be passed to sessions.
    pub mcp_http: bool,
    /// Ids of the authentication methods it offers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub auth_methods: Vec<String>,
}

/// A room as `GET /v1/rooms` lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Room {
    pub room_id: String,
    pub session_count: u64,
    pub head_seq: u64,
}

/// Whether text is blank: only whitespace, as Rust or as a JSON Schema pattern's `\s` counts it
/// (which also counts U+FEFF), so a documented `pattern: "\S"` and the server agree.
pub fn is_blank(text: &str) -> bool {
    text.chars().all(|c| c.is_whitespace() || c == '\u{feff}')
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
