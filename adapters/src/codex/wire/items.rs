//! A turn's items (messages, reasoning, commands, file changes, tool calls) and the `item/*`
//! notifications that start, stream and complete them.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::turn::UserInput;

/// One item of a turn, as `item/started` and `item/completed` carry it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum ThreadItem {
    UserMessage {
        #[serde(default)]
        id: String,
        #[serde(default)]
        content: Vec<UserInput>,
    },
    AgentMessage {
        #[serde(default)]
        id: String,
        /// The whole text (empty when it starts).
        #[serde(default)]
        text: String,
    },
    Reasoning {
        #[serde(default)]
        id: String,
        /// The summary's parts.
        #[serde(default)]
        summary: Vec<String>,
    },
    CommandExecution {
        #[serde(default)]
        id: String,
        #[serde(default)]
        command: Option<String>,
        #[serde(default)]
        cwd: Option<String>,
        #[serde(default)]
        status: Option<ItemStatus>,
        #[serde(default)]
        aggregated_output: Option<String>,
        #[serde(default)]
        exit_code: Option<i64>,
    },
    FileChange {
        #[serde(default)]
        id: String,
        #[serde(default)]
        changes: Vec<FileUpdateChange>,
        #[serde(default)]
        status: Option<ItemStatus>,
    },
    McpToolCall {
        #[serde(default)]
        id: String,
        #[serde(default)]
        server: String,
        #[serde(default)]
        tool: String,
        /// The call's arguments, as the tool defines them.
        #[serde(default)]
        arguments: Option<Value>,
        /// The tool's result, as the MCP server gave it; `Some(Value::Null)` when codex says
        /// `null` (a call that answered `null` shows no output, whatever its `error`).
        #[serde(default, deserialize_with = "present")]
        result: Option<Value>,
        #[serde(default)]
        error: Option<Value>,
        #[serde(default)]
        status: Option<ItemStatus>,
    },
    DynamicToolCall {
        #[serde(default)]
        id: String,
        #[serde(default)]
        tool: String,
        #[serde(default)]
        arguments: Option<Value>,
        #[serde(default)]
        content_items: Option<Value>,
        #[serde(default)]
        success: Option<bool>,
        #[serde(default)]
        status: Option<ItemStatus>,
    },
    CollabAgentToolCall {
        #[serde(default)]
        id: String,
        /// `spawnAgent`, `sendInput`, … (passed on as it is).
        #[serde(default)]
        tool: String,
        #[serde(default)]
        prompt: Option<String>,
        #[serde(default)]
        status: Option<ItemStatus>,
    },
    WebSearch {
        #[serde(default)]
        id: String,
        #[serde(default)]
        query: String,
    },
    /// An item Ensemble does not show (plans, images, review markers, newer kinds).
    #[serde(other)]
    Unknown,
}

/// Where a call item stands (each kind of item uses some of these).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum ItemStatus {
    InProgress,
    Completed,
    Failed,
    Declined,
    Interrupted,
    #[serde(other)]
    Unknown,
}

/// One file of a file change.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct FileUpdateChange {
    #[serde(default)]
    pub path: String,
    #[serde(default)]
    pub kind: Option<PatchChangeKind>,
    /// The unified diff.
    #[serde(default)]
    pub diff: Option<String>,
}

/// What happens to the file: `add`, `delete` or `update` (passed on as it is).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PatchChangeKind {
    #[serde(rename = "type")]
    pub kind: String,
}

/// `item/started` and `item/completed`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ItemNotification {
    #[serde(default)]
    pub thread_id: String,
    #[serde(default)]
    pub turn_id: String,
    pub item: ThreadItem,
}

/// A piece of streamed text or output: `item/agentMessage/delta`,
/// `item/reasoning/summaryTextDelta`, `item/reasoning/textDelta`,
/// `item/commandExecution/outputDelta`, `item/fileChange/outputDelta`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct DeltaNotification {
    #[serde(default)]
    pub thread_id: String,
    #[serde(default)]
    pub turn_id: String,
    #[serde(default)]
    pub item_id: String,
    #[serde(default)]
    pub delta: String,
}

/// `item/mcpToolCall/progress`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct McpToolCallProgressNotification {
    #[serde(default)]
    pub thread_id: String,
    #[serde(default)]
    pub turn_id: String,
    #[serde(default)]
    pub item_id: String,
    #[serde(default)]
    pub message: Option<String>,
}

/// `item/fileChange/patchUpdated`: a file change's files, before its approval is asked.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct FileChangePatchUpdatedNotification {
    #[serde(default)]
    pub thread_id: String,
    #[serde(default)]
    pub turn_id: String,
    #[serde(default)]
    pub item_id: String,
    #[serde(default)]
    pub changes: Vec<FileUpdateChange>,
}

/// A field that is there, `null` included.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}
