//! Anthropic Messages (`POST /v1/messages`), as Claude Code calls it: reading its requests, and
//! answering with the SSE sequence `message_start`, `content_block_start/delta/stop` per block,
//! `message_delta` (stop reason, usage), `message_stop`; or with one JSON message when the
//! request does not ask for a stream (Claude Code's auto-mode classifier).

use serde_json::{Value, json};

use crate::dialect::OfferedTool;
use crate::pieces::{Block, CallContext, Piece, blocks, piece};
use crate::reply::{StreamEnd, StreamReply, Usage};
use crate::request::{ToolOutput, is_context_wrapper};
use crate::sse::{Beat, Ids, Sink, Stop, beats, halves};

// ---------------------------------------------------------------- requests

fn messages(body: &Value) -> &[Value] {
    body.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

/// The user-visible text of a message's content: a string, or its `text` blocks joined, leaving
/// out Claude Code's `<system-reminder>` blocks. None when nothing is left (e.g. a message that
/// only carries tool results).
fn visible_text(content: Option<&Value>) -> Option<String> {
    match content {
        Some(Value::String(s)) => (!is_context_wrapper(s)).then(|| s.clone()),
        Some(Value::Array(blocks)) => {
            let texts: Vec<&str> = blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .filter(|t| !is_context_wrapper(t))
                .collect();
            (!texts.is_empty()).then(|| texts.concat())
        }
        _ => None,
    }
}

pub(crate) fn user_texts(body: &Value) -> Vec<String> {
    messages(body)
        .iter()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .filter_map(|m| visible_text(m.get("content")))
        .collect()
}

/// Name of the `tool_use` block with this id in the assistant messages.
fn tool_use_name(body: &Value, id: &str) -> Option<String> {
    messages(body)
        .iter()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
        .filter_map(|m| m.get("content").and_then(Value::as_array))
        .flatten()
        .find(|b| {
            b.get("type").and_then(Value::as_str) == Some("tool_use") && b.get("id").and_then(Value::as_str) == Some(id)
        })
        .and_then(|b| b.get("name").and_then(Value::as_str))
        .map(str::to_owned)
}

fn tool_results(body: &Value, message: &Value) -> Vec<ToolOutput> {
    let Some(blocks) = message.get("content").and_then(Value::as_array) else { return Vec::new() };
    blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
        .map(|b| {
            let call_id = b.get("tool_use_id").and_then(Value::as_str).unwrap_or_default().to_owned();
            let output = match b.get("content") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Array(parts)) => {
                    parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().concat()
                }
                Some(other) => other.to_string(),
                None => String::new(),
            };
            ToolOutput {
                kind: "tool_result".to_owned(),
                name: tool_use_name(body, &call_id),
                call_id,
                output,
                is_error: b.get("is_error").and_then(Value::as_bool).unwrap_or(false),
            }
        })
        .collect()
}

pub(crate) fn tool_outputs(body: &Value) -> Vec<ToolOutput> {
    messages(body)
        .iter()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .flat_map(|m| tool_results(body, m))
        .collect()
}

/// The last tool result if the conversation ends with a user message carrying tool results.
/// Claude Code puts a `system` message (environment info) into the conversation, which is
/// skipped.
pub(crate) fn trailing_tool_output(body: &Value) -> Option<ToolOutput> {
    let last = messages(body).iter().rev().find(|m| m.get("role").and_then(Value::as_str) != Some("system"))?;
    if last.get("role").and_then(Value::as_str) != Some("user") {
        return None;
    }
    tool_results(body, last).pop()
}

pub(crate) fn tools(body: &Value) -> Vec<OfferedTool> {
    body.get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| {
            let name = t.get("name").and_then(Value::as_str)?;
            Some(OfferedTool { name: name.to_owned(), schema: t.get("input_schema").cloned() })
        })
        .collect()
}

pub(crate) fn system_text(body: &Value) -> String {
    match body.get("system") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => {
            blocks.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    }
}

/// The JSON schema the request wants the answer to follow (`output_config.format`, as Claude
/// Code's title generation sends it).
pub(crate) fn output_schema(body: &Value) -> Option<&Value> {
    let format = body.pointer("/output_config/format")?;
    (format.get("type").and_then(Value::as_str) == Some("json_schema")).then(|| format.get("schema")).flatten()
}

// ---------------------------------------------------------------- answers

/// Anthropic counts cache reads apart from `input_tokens`; the mock's [`Usage`] includes them.
fn usage_json(usage: Usage) -> Value {
    json!({
        "input_tokens": usage.input_tokens.saturating_sub(usage.cached_input_tokens),
        "output_tokens": usage.output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": usage.cached_input_tokens,
    })
}

/// Streams are answered with zero usage when the reply has none: Claude Code reads `usage` from
/// `message_start` unconditionally.
const NO_USAGE: Usage = Usage { input_tokens: 0, cached_input_tokens: 0, output_tokens: 0, reasoning_output_tokens: 0 };

/// The signature Claude Code stores with a thinking block and sends back later.
const THINKING_SIGNATURE: &str = "mock-thinking-signature";

pub(crate) struct Writer {
    sink: Sink,
    ctx: CallContext,
    ids: Ids,
    index: u64,
    called_tool: bool,
}

impl Writer {
    pub(crate) fn new(sink: Sink, ctx: CallContext) -> Self {
        let ids = Ids::new(ctx.seq);
        Self { sink, ctx, ids, index: 0, called_tool: false }
    }

    async fn event(&mut self, event: &Value) -> Result<(), Stop> {
        let kind = event.get("type").and_then(Value::as_str).unwrap_or("message");
        self.sink.frame(format!("event: {kind}\ndata: {event}\n\n")).await
    }

    pub(crate) async fn write_all(&mut self, stream: &StreamReply) -> Result<(), Stop> {
        let usage = stream.usage.unwrap_or(NO_USAGE);
        let mut start_usage = usage_json(usage);
        // Like the real API: output so far is 1 token at the start; the total comes at the end.
        start_usage["output_tokens"] = json!(1);
        let id = self.ids.next("msg");
        self.event(&json!({"type": "message_start", "message": {
            "id": id, "type": "message", "role": "assistant", "model": self.ctx.model, "content": [],
            "stop_reason": null, "stop_sequence": null, "usage": start_usage
        }}))
        .await?;
        for step in &stream.steps {
            let piece = piece(step, &self.ctx);
            self.write_piece(piece).await?;
        }
        match &stream.end {
            StreamEnd::Completed => {
                let stop_reason = if self.called_tool { "tool_use" } else { "end_turn" };
                self.event(&json!({"type": "message_delta",
                    "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                    "usage": {"output_tokens": usage.output_tokens}}))
                    .await?;
                self.event(&json!({"type": "message_stop"})).await
            }
            StreamEnd::Failed { code, message } => {
                self.event(&json!({"type": "error", "error": {"type": code, "message": message}})).await
            }
            StreamEnd::Close => Ok(()),
        }
    }

    async fn write_piece(&mut self, piece: Piece<'_>) -> Result<(), Stop> {
        match piece {
            Piece::Thinking(summary) => {
                let index = self.next_index();
                self.event(&json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""}}))
                    .await?;
                for delta in summary {
                    self.event(&json!({"type": "content_block_delta", "index": index,
                        "delta": {"type": "thinking_delta", "thinking": delta}}))
                        .await?;
                }
                self.event(&json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "signature_delta", "signature": THINKING_SIGNATURE}}))
                    .await?;
                self.event(&json!({"type": "content_block_stop", "index": index})).await
            }
            Piece::Text(message) => {
                let index = self.next_index();
                self.event(&json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "text", "text": ""}}))
                    .await?;
                for beat in beats(message) {
                    match beat {
                        Beat::Delta(text) => {
                            self.event(&json!({"type": "content_block_delta", "index": index,
                                "delta": {"type": "text_delta", "text": text}}))
                                .await?;
                        }
                        Beat::Wait(gate) => self.sink.wait_gate(gate).await?,
                        Beat::Pause(duration) => self.sink.pause(duration).await?,
                    }
                }
                self.event(&json!({"type": "content_block_stop", "index": index})).await
            }
            Piece::ToolCall { name, args, id } => {
                self.called_tool = true;
                let index = self.next_index();
                let id = id.unwrap_or_else(|| self.ids.next("toolu"));
                self.event(&json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}))
                    .await?;
                let text = args.to_string();
                for part in halves(&text) {
                    self.event(&json!({"type": "content_block_delta", "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": part}}))
                        .await?;
                }
                self.event(&json!({"type": "content_block_stop", "index": index})).await
            }
            Piece::Wait(gate) => self.sink.wait_gate(gate).await,
            Piece::Sleep(duration) => self.sink.pause(duration).await,
            Piece::Raw(event) => self.event(event).await,
        }
    }

    fn next_index(&mut self) -> u64 {
        let i = self.index;
        self.index += 1;
        i
    }
}

/// The whole reply as one Messages API response (`stream` absent or false).
pub(crate) fn message_json(stream: &StreamReply, ctx: &CallContext) -> Value {
    let mut ids = Ids::new(ctx.seq);
    let id = ids.next("msg");
    let mut called_tool = false;
    let content: Vec<Value> = blocks(&stream.steps, ctx)
        .into_iter()
        .map(|block| match block {
            Block::Thinking(text) => json!({"type": "thinking", "thinking": text, "signature": THINKING_SIGNATURE}),
            Block::Text(text) => json!({"type": "text", "text": text}),
            Block::ToolCall { name, args, id } => {
                called_tool = true;
                json!({"type": "tool_use", "id": id.unwrap_or_else(|| ids.next("toolu")), "name": name, "input": args})
            }
        })
        .collect();
    json!({
        "id": id, "type": "message", "role": "assistant", "model": ctx.model, "content": content,
        "stop_reason": if called_tool { "tool_use" } else { "end_turn" }, "stop_sequence": null,
        "usage": usage_json(stream.usage.unwrap_or(NO_USAGE)),
    })
}
