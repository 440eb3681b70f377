//! The ACP methods Ensemble calls, typed with the `agent-client-protocol` crate's schema (protocol
//! v1) for [`crate::kit::typed`]: one [`Request`] per method, names from the schema's own tables.

use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::v1::schema::{AGENT_METHOD_NAMES, CLIENT_METHOD_NAMES};

use crate::kit::typed::{Notification, Request};

pub(super) use acp::*;
pub(super) use agent_client_protocol::schema::{MaybeUndefined, ProtocolVersion};

macro_rules! request {
    ($name:ident, $method:ident, $params:ty, $response:ty) => {
        pub(super) enum $name {}
        impl Request for $name {
            const METHOD: &'static str = AGENT_METHOD_NAMES.$method;
            type Params = $params;
            type Response = $response;
        }
    };
}

request!(Initialize, initialize, acp::InitializeRequest, acp::InitializeResponse);
request!(NewSession, session_new, acp::NewSessionRequest, acp::NewSessionResponse);
request!(LoadSession, session_load, acp::LoadSessionRequest, acp::LoadSessionResponse);
request!(ResumeSession, session_resume, acp::ResumeSessionRequest, acp::ResumeSessionResponse);
request!(Prompt, session_prompt, acp::PromptRequest, acp::PromptResponse);
request!(ListSessions, session_list, acp::ListSessionsRequest, acp::ListSessionsResponse);
request!(SetMode, session_set_mode, acp::SetSessionModeRequest, acp::SetSessionModeResponse);
request!(
    SetConfigOption,
    session_set_config_option,
    acp::SetSessionConfigOptionRequest,
    acp::SetSessionConfigOptionResponse
);
request!(CloseSession, session_close, acp::CloseSessionRequest, acp::CloseSessionResponse);
request!(ForkSession, session_fork, acp::ForkSessionRequest, acp::ForkSessionResponse);

/// `session/cancel`.
pub(super) enum Cancel {}
impl Notification for Cancel {
    const METHOD: &'static str = AGENT_METHOD_NAMES.session_cancel;
    type Params = acp::CancelNotification;
}

/// The client methods an agent calls that Ensemble serves.
pub(super) mod client {
    use super::CLIENT_METHOD_NAMES;

    pub(in super::super) const UPDATE: &str = CLIENT_METHOD_NAMES.session_update;
    pub(in super::super) const REQUEST_PERMISSION: &str = CLIENT_METHOD_NAMES.session_request_permission;
    pub(in super::super) const READ_TEXT_FILE: &str = CLIENT_METHOD_NAMES.fs_read_text_file;
    pub(in super::super) const WRITE_TEXT_FILE: &str = CLIENT_METHOD_NAMES.fs_write_text_file;
    pub(in super::super) const ELICITATION_CREATE: &str = CLIENT_METHOD_NAMES.elicitation_create;
    pub(in super::super) const TERMINAL_CREATE: &str = CLIENT_METHOD_NAMES.terminal_create;
    pub(in super::super) const TERMINAL_OUTPUT: &str = CLIENT_METHOD_NAMES.terminal_output;
    pub(in super::super) const TERMINAL_WAIT_FOR_EXIT: &str = CLIENT_METHOD_NAMES.terminal_wait_for_exit;
    pub(in super::super) const TERMINAL_KILL: &str = CLIENT_METHOD_NAMES.terminal_kill;
    pub(in super::super) const TERMINAL_RELEASE: &str = CLIENT_METHOD_NAMES.terminal_release;
}

/// JSON-RPC error codes of the answers Ensemble gives the agent.
pub(super) mod codes {
    pub(in super::super) const METHOD_NOT_FOUND: i64 = -32601;
    pub(in super::super) const INVALID_PARAMS: i64 = -32602;
    pub(in super::super) const INTERNAL: i64 = -32603;
    /// ACP's "resource not found" (a file that does not exist).
    pub(in super::super) const RESOURCE_NOT_FOUND: i64 = -32002;
}
