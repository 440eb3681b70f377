//! What an ACP agent asks of its client besides permissions: terminals (`terminal/*`), questions
//! (elicitation) and files (`fs/*`), each answered on the session's loop in [`super::Live`].

use ensemble_core::event::{Decision, EventBody, InteractionKind, InteractionRequestedPayload};
use serde_json::Value;

use super::{Live, PendingPermission};
use crate::acp::fs;
use crate::acp::wire::{self as acp, client, codes};
use crate::kit::jsonrpc;

impl Live {
    /// `terminal/*` (see [`crate::acp::terminal`]).
    pub(super) async fn on_terminal(&self, id: Value, method: &str, params: Value) {
        use crate::acp::terminal::TerminalError;
        fn parse<T: serde::de::DeserializeOwned>(params: Value) -> Result<T, TerminalError> {
            serde_json::from_value(params)
                .map_err(|e| TerminalError { code: codes::INVALID_PARAMS, message: jsonrpc::redacted(&e) })
        }
        fn json<T: serde::Serialize>(r: Result<T, TerminalError>) -> Result<Value, TerminalError> {
            r.map(|v| serde_json::to_value(v).unwrap_or_default())
        }
        let t = &self.terminals;
        let result = match method {
            client::TERMINAL_CREATE => parse::<acp::CreateTerminalRequest>(params).and_then(|r| json(t.create(&r))),
            client::TERMINAL_OUTPUT => {
                parse::<acp::TerminalOutputRequest>(params).and_then(|r| json(t.output(&r.terminal_id)))
            }
            client::TERMINAL_WAIT_FOR_EXIT => match parse::<acp::WaitForTerminalExitRequest>(params) {
                Ok(r) => json(t.wait_for_exit(&r.terminal_id).await),
                Err(e) => Err(e),
            },
            client::TERMINAL_KILL => {
                parse::<acp::KillTerminalRequest>(params).and_then(|r| json(t.kill(&r.terminal_id)))
            }
            client::TERMINAL_RELEASE => {
                parse::<acp::ReleaseTerminalRequest>(params).and_then(|r| json(t.release(&r.terminal_id)))
            }
            other => Err(TerminalError {
                code: codes::METHOD_NOT_FOUND,
                message: format!("Ensemble does not offer `{other}`"),
            }),
        };
        match result {
            Ok(v) => {
                if let Err(e) = self.rpc.respond(id, v).await {
                    tracing::debug!(session = %self.key, error = %e, "could not answer a terminal request");
                }
            }
            Err(e) => self.respond_error(id, e.code, &e.message).await,
        }
    }

    /// Output of a terminal a call shows: that call's output.
    pub(super) async fn terminal_output(&self, call_id: String, text: String) {
        let turn = self.state().active.as_ref().map(|a| a.ours.clone());
        let body = EventBody::CallUpdated(ensemble_core::event::CallUpdatedPayload {
            call_id,
            output_delta: Some(text),
            status: None,
        });
        self.sink.emit(turn.as_deref(), body).await;
    }

    /// The calls of an update that show a terminal: linked, and what it printed so far sent.
    pub(super) fn link_terminals(&self, update: &acp::SessionUpdate) -> Vec<(String, String)> {
        let (call, content) = match update {
            acp::SessionUpdate::ToolCall(c) => (c.tool_call_id.0.to_string(), Some(&c.content)),
            acp::SessionUpdate::ToolCallUpdate(u) => (u.tool_call_id.0.to_string(), u.fields.content.as_ref()),
            _ => return Vec::new(),
        };
        content
            .into_iter()
            .flatten()
            .filter_map(|c| match c {
                acp::ToolCallContent::Terminal(t) => {
                    self.terminals.link(&t.terminal_id.0, &call).map(|so_far| (call.clone(), so_far))
                }
                _ => None,
            })
            .collect()
    }

    /// `elicitation/create`: a question for the user (`userInput`), answered from REST.
    pub(super) async fn on_elicitation(&self, id: Value, params: Value) {
        let request: acp::CreateElicitationRequest = match serde_json::from_value(params) {
            Ok(r) => r,
            Err(e) => {
                let message = format!("Ensemble cannot read the elicitation: {}", jsonrpc::redacted(&e));
                return self.respond_error(id, codes::INVALID_PARAMS, &message).await;
            }
        };
        let ours = self.session_id();
        let asked = match crate::acp::elicit::ask(&request) {
            Some(a) if crate::acp::elicit::session_of(&request).is_none_or(|s| Some(s) == ours) => a,
            Some(_) => return self.respond_error(id, codes::INVALID_PARAMS, "unknown session").await,
            None => {
                return self
                    .respond_error(id, codes::INVALID_PARAMS, "an elicitation mode Ensemble does not know")
                    .await;
            }
        };
        let request_id = crate::kit::ids::request_id(&self.nonce, &id);
        let payload = InteractionRequestedPayload {
            request_id: request_id.clone(),
            kind: InteractionKind::UserInput,
            title: asked.title,
            detail: None,
            command: None,
            cwd: None,
            diff: None,
            questions: asked.questions,
            options: vec![Decision::Accept, Decision::Decline, Decision::Cancel],
            call_id: None,
            agent_options: Vec::new(),
        };
        let turn = {
            let mut st = self.state();
            st.pending
                .insert(request_id, PendingPermission { rpc_id: id, options: Vec::new(), form: Some(asked.fields) });
            st.active.as_ref().map(|a| a.ours.clone())
        };
        self.sink.emit(turn.as_deref(), EventBody::InteractionRequested(payload)).await;
    }

    pub(super) async fn on_file(&self, id: Value, method: &str, params: Value) {
        let session = self.session_id();
        let result = if method == client::READ_TEXT_FILE {
            match serde_json::from_value::<acp::ReadTextFileRequest>(params) {
                Ok(r) if Some(&*r.session_id.0) == session.as_deref() => self
                    .files
                    .read_text(&r.path, r.line, r.limit, self.quirks().missing_file_reads_empty)
                    .await
                    .map(|text| serde_json::to_value(acp::ReadTextFileResponse::new(text)).unwrap_or_default()),
                Ok(_) => Err(fs::FsError::new(codes::INVALID_PARAMS, "unknown session")),
                Err(e) => Err(fs::FsError::new(codes::INVALID_PARAMS, jsonrpc::redacted(&e))),
            }
        } else {
            match serde_json::from_value::<acp::WriteTextFileRequest>(params) {
                Ok(r) if Some(&*r.session_id.0) == session.as_deref() => {
                    self.files.write(&r.path, r.content).await.map(|()| serde_json::json!({}))
                }
                Ok(_) => Err(fs::FsError::new(codes::INVALID_PARAMS, "unknown session")),
                Err(e) => Err(fs::FsError::new(codes::INVALID_PARAMS, jsonrpc::redacted(&e))),
            }
        };
        match result {
            Ok(value) => {
                if let Err(e) = self.rpc.respond(id, value).await {
                    tracing::debug!(session = %self.key, error = %e, "could not answer a file request");
                }
            }
            Err(e) => {
                tracing::info!(session = %self.key, method, code = e.code, "refused a file request: {}", e.message);
                self.respond_error(id, e.code, &e.message).await;
            }
        }
    }
}
