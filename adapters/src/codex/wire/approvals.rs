//! What codex asks the client (approvals, questions, elicitations, dynamic tool calls), the
//! answers, and `serverRequest/resolved` (codex withdrew a question).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What every approval request carries: the item that asks, and why.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequest {
    #[serde(default)]
    pub thread_id: String,
    #[serde(default)]
    pub turn_id: String,
    /// The item asking (a file change's `item/started` has its diff).
    #[serde(default)]
    pub item_id: Option<String>,
    #[serde(default)]
    pub reason: Option<String>,
}

/// `item/commandExecution/requestApproval`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct CommandExecutionRequestApprovalParams {
    #[serde(flatten)]
    pub request: ApprovalRequest,
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    /// What codex offers, in its order.
    #[serde(default)]
    pub available_decisions: Option<Vec<OfferedDecision>>,
}

/// A decision codex offers: a plain one, or one with an amendment Ensemble has no form for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum OfferedDecision {
    Plain(ApprovalDecision),
    Other(Value),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum ApprovalDecision {
    Accept,
    AcceptForSession,
    Decline,
    Cancel,
}

/// The answer to a [`super::ServerRequest`].
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ServerResponse {
    Approval(ApprovalResponse),
    Permissions(PermissionsRequestApprovalResponse),
    UserInput(ToolRequestUserInputResponse),
    McpServerElicitation(McpServerElicitationRequestResponse),
    DynamicToolCall(DynamicToolCallResponse),
}

/// `item/fileChange/requestApproval`.
pub type FileChangeRequestApprovalParams = ApprovalRequest;

/// The answer to a command or file-change approval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApprovalResponse {
    pub decision: ApprovalDecision,
}

/// `item/permissions/requestApproval`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct PermissionsRequestApprovalParams {
    #[serde(flatten)]
    pub request: ApprovalRequest,
    #[serde(default)]
    pub cwd: Option<String>,
    /// The permission profile asked for (network, file system, …): shown, and granted as it is.
    #[serde(default)]
    pub permissions: Option<Value>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct PermissionsRequestApprovalResponse {
    /// What is granted (nothing: `{}`).
    pub permissions: Value,
    pub scope: PermissionGrantScope,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum PermissionGrantScope {
    Turn,
    Session,
}

/// `item/tool/requestUserInput`: questions for the user (plan mode).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ToolRequestUserInputParams {
    #[serde(default)]
    pub thread_id: String,
    #[serde(default)]
    pub turn_id: String,
    #[serde(default)]
    pub item_id: Option<String>,
    #[serde(default)]
    pub questions: Vec<ToolRequestUserInputQuestion>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ToolRequestUserInputQuestion {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub header: Option<String>,
    #[serde(default)]
    pub question: String,
    #[serde(default)]
    pub options: Option<Vec<ToolRequestUserInputOption>>,
    /// The user may answer something other than the options.
    #[serde(default)]
    pub is_other: bool,
    #[serde(default)]
    pub is_secret: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ToolRequestUserInputOption {
    #[serde(default)]
    pub label: String,
    #[serde(default)]
    pub description: Option<String>,
}

/// The answers, by question id.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ToolRequestUserInputResponse {
    pub answers: BTreeMap<String, ToolRequestUserInputAnswer>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ToolRequestUserInputAnswer {
    pub answers: Vec<String>,
}

/// `mcpServer/elicitation/request`: an MCP server asks the user for something.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct McpServerElicitationRequestParams {
    #[serde(default)]
    pub thread_id: String,
    #[serde(default)]
    pub turn_id: Option<String>,
    #[serde(default)]
    pub server_name: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct McpServerElicitationRequestResponse {
    pub action: McpServerElicitationAction,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum McpServerElicitationAction {
    Accept,
    Decline,
    Cancel,
}

/// `item/tool/call`: codex calls a tool the client declared.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct DynamicToolCallParams {
    #[serde(default)]
    pub thread_id: String,
    #[serde(default)]
    pub turn_id: String,
    #[serde(default)]
    pub call_id: String,
    #[serde(default)]
    pub tool: String,
    #[serde(default)]
    pub arguments: Value,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct DynamicToolCallResponse {
    pub content_items: Vec<DynamicToolCallOutputContentItem>,
    pub success: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum DynamicToolCallOutputContentItem {
    InputText { text: String },
}

/// `serverRequest/resolved`: codex no longer waits for the answer to `request_id`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ServerRequestResolvedNotification {
    #[serde(default)]
    pub thread_id: String,
    pub request_id: RequestId,
}

/// A JSON-RPC request id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum RequestId {
    Integer(i64),
    String(String),
}

impl RequestId {
    /// Whether `id` (as the JSON-RPC layer keeps it) is this id.
    pub fn is(&self, id: &Value) -> bool {
        match self {
            Self::Integer(n) => id.as_i64() == Some(*n),
            Self::String(s) => id.as_str() == Some(s.as_str()),
        }
    }
}
