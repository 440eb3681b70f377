//! The part of codex app-server's protocol (0.171.0; 0.169.0 speaks it too) that Ensemble speaks, as types: one struct
//! per params, result and notification it sends or reads, every method name once in [`method`],
//! and the tables that tie methods to their types ([`ClientRequest`] with a [`Request`] type per
//! method, [`ServerNotification`], [`ServerRequest`]).
//!
//! The types follow codex's habits (camelCase fields, unions tagged by `type`) and carry only what
//! Ensemble reads or sends. Reading stays as tolerant as codex needs: unknown fields are ignored,
//! a field Ensemble can do without is optional or defaulted, string enums that grow have an
//! `Unknown` catch-all, and a method none of the tables knows is not an error (`parse` answers
//! `None`). The tests hold every type against codex's JSON Schema and read the recorded
//! transcripts of a real codex with them.

mod approvals;
mod items;
mod setup;
mod thread;
mod turn;

#[cfg(test)]
mod tests;

pub use approvals::*;
pub use items::*;
pub use setup::*;
pub use thread::*;
pub use turn::*;

use serde_json::Value;

pub use crate::kit::typed::{Notification, Request};

/// Every method name Ensemble sends or reads.
pub mod method {
    // Client → server requests.
    pub const INITIALIZE: &str = "initialize";
    pub const ACCOUNT_READ: &str = "account/read";
    pub const MODEL_PROVIDER_LIST: &str = "modelProvider/list";
    pub const MODEL_LIST: &str = "model/list";
    pub const THREAD_START: &str = "thread/start";
    pub const THREAD_RESUME: &str = "thread/resume";
    pub const THREAD_FORK: &str = "thread/fork";
    pub const THREAD_INJECT_ITEMS: &str = "thread/inject_items";
    pub const THREAD_UNSUBSCRIBE: &str = "thread/unsubscribe";
    pub const THREAD_GOAL_SET: &str = "thread/goal/set";
    pub const THREAD_GOAL_CLEAR: &str = "thread/goal/clear";
    pub const TURN_START: &str = "turn/start";
    pub const TURN_STEER: &str = "turn/steer";
    pub const TURN_INTERRUPT: &str = "turn/interrupt";

    // Client → server notifications.
    pub const INITIALIZED: &str = "initialized";

    // Server → client notifications.
    pub const THREAD_STARTED: &str = "thread/started";
    pub const THREAD_NAME_UPDATED: &str = "thread/name/updated";
    pub const THREAD_TOKEN_USAGE_UPDATED: &str = "thread/tokenUsage/updated";
    pub const THREAD_GOAL_UPDATED: &str = "thread/goal/updated";
    pub const THREAD_GOAL_CLEARED: &str = "thread/goal/cleared";
    pub const TURN_STARTED: &str = "turn/started";
    pub const TURN_COMPLETED: &str = "turn/completed";
    pub const TURN_PLAN_UPDATED: &str = "turn/plan/updated";
    pub const ITEM_STARTED: &str = "item/started";
    pub const ITEM_COMPLETED: &str = "item/completed";
    pub const AGENT_MESSAGE_DELTA: &str = "item/agentMessage/delta";
    pub const REASONING_SUMMARY_TEXT_DELTA: &str = "item/reasoning/summaryTextDelta";
    pub const REASONING_TEXT_DELTA: &str = "item/reasoning/textDelta";
    pub const COMMAND_EXECUTION_OUTPUT_DELTA: &str = "item/commandExecution/outputDelta";
    pub const FILE_CHANGE_OUTPUT_DELTA: &str = "item/fileChange/outputDelta";
    pub const FILE_CHANGE_PATCH_UPDATED: &str = "item/fileChange/patchUpdated";
    pub const MCP_TOOL_CALL_PROGRESS: &str = "item/mcpToolCall/progress";
    pub const SERVER_REQUEST_RESOLVED: &str = "serverRequest/resolved";
    pub const ERROR: &str = "error";
    pub const WARNING: &str = "warning";
    pub const GUARDIAN_WARNING: &str = "guardianWarning";
    pub const CONFIG_WARNING: &str = "configWarning";
    pub const DEPRECATION_NOTICE: &str = "deprecationNotice";
    pub const MODEL_REROUTED: &str = "model/rerouted";

    // Server → client requests.
    pub const COMMAND_EXECUTION_REQUEST_APPROVAL: &str = "item/commandExecution/requestApproval";
    pub const FILE_CHANGE_REQUEST_APPROVAL: &str = "item/fileChange/requestApproval";
    pub const PERMISSIONS_REQUEST_APPROVAL: &str = "item/permissions/requestApproval";
    pub const TOOL_REQUEST_USER_INPUT: &str = "item/tool/requestUserInput";
    pub const MCP_SERVER_ELICITATION_REQUEST: &str = "mcpServer/elicitation/request";
    pub const DYNAMIC_TOOL_CALL: &str = "item/tool/call";
}

/// Declares the client's requests: a [`Request`] type per method, and [`ClientRequest`] to read them.
macro_rules! client_requests {
    ($( $(#[$doc:meta])* $name:ident = $method:ident($params:ty) -> $response:ty; )*) => {
        $(
            $(#[$doc])*
            pub enum $name {}

            impl Request for $name {
                const METHOD: &'static str = method::$method;
                type Params = $params;
                type Response = $response;
            }
        )*

        /// A request of the client, read (what a stand-in for codex answers).
        #[derive(Clone, Debug, PartialEq)]
        pub enum ClientRequest {
            $( $name($params), )*
        }

        impl ClientRequest {
            pub const METHODS: &'static [&'static str] = &[$( method::$method ),*];

            /// The request `method` with `params`; `None` for a method not in this table.
            pub fn parse(method: &str, params: Value) -> Result<Option<Self>, serde_json::Error> {
                Ok(Some(match method {
                    $( method::$method => Self::$name(serde_json::from_value(params)?), )*
                    _ => return Ok(None),
                }))
            }

            #[cfg(test)]
            fn rows() -> Vec<tests::Row> {
                vec![$( tests::Row::of::<$params, $response>(method::$method), )*]
            }
        }
    };
}

/// Declares what the server sends, as an enum with a variant per method.
macro_rules! server_messages {
    (
        $(#[$meta:meta])*
        pub enum $enum:ident { $( $(#[$doc:meta])* $name:ident($params:ty) $(-> $response:ty)? = $method:ident, )* }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq)]
        pub enum $enum {
            $( $(#[$doc])* $name($params), )*
        }

        impl $enum {
            pub const METHODS: &'static [&'static str] = &[$( method::$method ),*];

            /// The message `method` with `params`; `None` for a method not in this table.
            pub fn parse(method: &str, params: Value) -> Result<Option<Self>, serde_json::Error> {
                Ok(Some(match method {
                    $( method::$method => Self::$name(serde_json::from_value(params)?), )*
                    _ => return Ok(None),
                }))
            }

            pub fn method(&self) -> &'static str {
                match self {
                    $( Self::$name(_) => method::$method, )*
                }
            }

            /// The message's params, as JSON.
            pub fn params(&self) -> Result<Value, serde_json::Error> {
                match self {
                    $( Self::$name(p) => serde_json::to_value(p), )*
                }
            }

            #[cfg(test)]
            fn rows() -> Vec<tests::Row> {
                vec![$( server_messages!(@row $method, $params $(, $response)?), )*]
            }
        }
    };
    (@row $method:ident, $params:ty) => { tests::Row::notification::<$params>(method::$method) };
    (@row $method:ident, $params:ty, $response:ty) => { tests::Row::of::<$params, $response>(method::$method) };
}

client_requests! {
    Initialize = INITIALIZE(InitializeParams) -> InitializeResponse;
    /// Is codex logged in?
    AccountRead = ACCOUNT_READ(GetAccountParams) -> GetAccountResponse;
    /// The model providers, and where their keys come from.
    ModelProviderList = MODEL_PROVIDER_LIST(ModelProviderListParams) -> ModelProviderListResponse;
    ModelList = MODEL_LIST(ModelListParams) -> ModelListResponse;
    ThreadStart = THREAD_START(ThreadStartParams) -> ThreadResponse;
    ThreadResume = THREAD_RESUME(ThreadResumeParams) -> ThreadResponse;
    ThreadFork = THREAD_FORK(ThreadForkParams) -> ThreadResponse;
    ThreadInjectItems = THREAD_INJECT_ITEMS(ThreadInjectItemsParams) -> EmptyResponse;
    /// Stop receiving a thread's notifications (a closed side's fork).
    ThreadUnsubscribe = THREAD_UNSUBSCRIBE(ThreadIdParams) -> ThreadUnsubscribeResponse;
    ThreadGoalSet = THREAD_GOAL_SET(ThreadGoalSetParams) -> ThreadGoalSetResponse;
    ThreadGoalClear = THREAD_GOAL_CLEAR(ThreadIdParams) -> ThreadGoalClearResponse;
    TurnStart = TURN_START(TurnStartParams) -> TurnStartResponse;
    TurnSteer = TURN_STEER(TurnSteerParams) -> TurnSteerResponse;
    TurnInterrupt = TURN_INTERRUPT(TurnInterruptParams) -> EmptyResponse;
}

/// The client's `initialized` (no params), after `initialize`'s answer.
pub enum Initialized {}

impl Notification for Initialized {
    const METHOD: &'static str = method::INITIALIZED;
    type Params = ();
}

server_messages! {
    /// A notification Ensemble reads.
    pub enum ServerNotification {
        ThreadStarted(ThreadStartedNotification) = THREAD_STARTED,
        ThreadNameUpdated(ThreadNameUpdatedNotification) = THREAD_NAME_UPDATED,
        ThreadTokenUsageUpdated(ThreadTokenUsageUpdatedNotification) = THREAD_TOKEN_USAGE_UPDATED,
        ThreadGoalUpdated(ThreadGoalUpdatedNotification) = THREAD_GOAL_UPDATED,
        ThreadGoalCleared(ThreadGoalClearedNotification) = THREAD_GOAL_CLEARED,
        TurnStarted(TurnNotification) = TURN_STARTED,
        TurnCompleted(TurnNotification) = TURN_COMPLETED,
        TurnPlanUpdated(TurnPlanUpdatedNotification) = TURN_PLAN_UPDATED,
        ItemStarted(ItemNotification) = ITEM_STARTED,
        ItemCompleted(ItemNotification) = ITEM_COMPLETED,
        AgentMessageDelta(DeltaNotification) = AGENT_MESSAGE_DELTA,
        ReasoningSummaryTextDelta(DeltaNotification) = REASONING_SUMMARY_TEXT_DELTA,
        ReasoningTextDelta(DeltaNotification) = REASONING_TEXT_DELTA,
        CommandExecutionOutputDelta(DeltaNotification) = COMMAND_EXECUTION_OUTPUT_DELTA,
        FileChangeOutputDelta(DeltaNotification) = FILE_CHANGE_OUTPUT_DELTA,
        FileChangePatchUpdated(FileChangePatchUpdatedNotification) = FILE_CHANGE_PATCH_UPDATED,
        McpToolCallProgress(McpToolCallProgressNotification) = MCP_TOOL_CALL_PROGRESS,
        ServerRequestResolved(ServerRequestResolvedNotification) = SERVER_REQUEST_RESOLVED,
        Error(ErrorNotification) = ERROR,
        Warning(WarningNotification) = WARNING,
        GuardianWarning(WarningNotification) = GUARDIAN_WARNING,
        ConfigWarning(SummaryNotification) = CONFIG_WARNING,
        DeprecationNotice(SummaryNotification) = DEPRECATION_NOTICE,
        ModelRerouted(ModelReroutedNotification) = MODEL_REROUTED,
    }
}

server_messages! {
    /// A request of codex that Ensemble answers.
    pub enum ServerRequest {
        CommandExecutionApproval(CommandExecutionRequestApprovalParams) -> ApprovalResponse
            = COMMAND_EXECUTION_REQUEST_APPROVAL,
        FileChangeApproval(FileChangeRequestApprovalParams) -> ApprovalResponse = FILE_CHANGE_REQUEST_APPROVAL,
        PermissionsApproval(PermissionsRequestApprovalParams) -> PermissionsRequestApprovalResponse
            = PERMISSIONS_REQUEST_APPROVAL,
        UserInput(ToolRequestUserInputParams) -> ToolRequestUserInputResponse = TOOL_REQUEST_USER_INPUT,
        McpServerElicitation(McpServerElicitationRequestParams) -> McpServerElicitationRequestResponse
            = MCP_SERVER_ELICITATION_REQUEST,
        DynamicToolCall(DynamicToolCallParams) -> DynamicToolCallResponse = DYNAMIC_TOOL_CALL,
    }
}

/// The thread and turn any message is about, whatever its method: thread-scoped messages carry
/// `threadId`, turn-scoped ones `turnId` (the router and the turn binding read them before, and
/// whether or not, the message's own type is known).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scope<'a> {
    pub thread_id: Option<&'a str>,
    pub turn_id: Option<&'a str>,
}

impl<'a> Scope<'a> {
    pub fn of(params: &'a Value) -> Self {
        Self {
            thread_id: params.get("threadId").and_then(Value::as_str),
            turn_id: params.get("turnId").and_then(Value::as_str),
        }
    }
}
