//! OpenAI chat completions (`POST /v1/chat/completions`), as opencode's
//! `@ai-sdk/openai-compatible` provider calls it: reading its requests, and answering with
//! `chat.completion.chunk`s (`delta.content`, `delta.tool_calls`, `delta.reasoning_content`), a
//! chunk with `finish_reason`, a usage chunk when asked for, and `data: [DONE]`; or with one
//! `chat.completion` when `stream` is not true.

use std::time::{SystemTime, UNIX_EPOCH};

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

fn role(message: &Value) -> &str {
    message.get("role").and_then(Value::as_str).unwrap_or_default()
}

/// A message's text: a string, or its text parts joined.
fn content_text(content: Option<&Value>) -> Option<String> {
    match content {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(parts)) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
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
        .filter(|m| role(m) == "user")
        .filter_map(|m| content_text(m.get("content")))
        .filter(|t| !is_context_wrapper(t))
        .collect()
}

fn tool_call_name(body: &Value, id: &str) -> Option<String> {
    messages(body)
        .iter()
        .filter(|m| role(m) == "assistant")
        .filter_map(|m| m.get("tool_calls").and_then(Value::as_array))
        .flatten()
        .find(|c| c.get("id").and_then(Value::as_str) == Some(id))
        .and_then(|c| c.pointer("/function/name").and_then(Value::as_str))
        .map(str::to_owned)
}

/// A `role: "tool"` message as a tool result. The format has no error flag, so `is_error` is
/// always false (opencode ends the turn on a rejection instead of reporting it).
fn tool_message(body: &Value, message: &Value) -> Option<ToolOutput> {
    if role(message) != "tool" {
        return None;
    }
    let call_id = message.get("tool_call_id").and_then(Value::as_str).unwrap_or_default().to_owned();
    Some(ToolOutput {
        kind: "tool".to_owned(),
        name: tool_call_name(body, &call_id),
        call_id,
        output: content_text(message.get("content")).unwrap_or_default(),
        is_error: false,
    })
}

pub(crate) fn tool_outputs(body: &Value) -> Vec<ToolOutput> {
    messages(body).iter().filter_map(|m| tool_message(body, m)).collect()
}

pub(crate) fn trailing_tool_output(body: &Value) -> Option<ToolOutput> {
    messages(body).last().and_then(|m| tool_message(body, m))
}

pub(crate) fn tools(body: &Value) -> Vec<OfferedTool> {
    body.get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| {
            let function = t.get("function")?;
            let name = function.get("name").and_then(Value::as_str)?;
            Some(OfferedTool { name: name.to_owned(), schema: function.get("parameters").cloned() })
        })
        .collect()
}

pub(crate) fn system_text(body: &Value) -> String {
    messages(body)
        .iter()
        .filter(|m| matches!(role(m), "system" | "developer"))
        .filter_map(|m| content_text(m.get("content")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The JSON schema of `response_format` (`json_schema`); `json_object` gets `{}`.
pub(crate) fn output_schema(body: &Value) -> Option<&Value> {
    let format = body.get("response_format")?;
    match format.get("type").and_then(Value::as_str)? {
        "json_schema" => format.pointer("/json_schema/schema").or(Some(&Value::Null)),
        "json_object" => Some(&Value::Null),
        _ => None,
    }
}

// ---------------------------------------------------------------- answers

fn usage_json(usage: Usage) -> Value {
    json!({
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_input_tokens},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning_output_tokens},
    })
}

fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

pub(crate) struct Writer {
    sink: Sink,
    ctx: CallContext,
    ids: Ids,
    id: String,
    created: u64,
    tool_index: u64,
}

impl Writer {
    pub(crate) fn new(sink: Sink, ctx: CallContext) -> Self {
        let mut ids = Ids::new(ctx.seq);
        let id = ids.next("chatcmpl");
        Self { sink, ctx, ids, id, created: now_secs(), tool_index: 0 }
    }

    async fn data(&mut self, value: &Value) -> Result<(), Stop> {
        self.sink.frame(format!("data: {value}\n\n")).await
    }

    async fn delta(&mut self, delta: Value, finish_reason: Option<&str>) -> Result<(), Stop> {
        let chunk = json!({
            "id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.ctx.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        });
        self.data(&chunk).await
    }

    pub(crate) async fn write_all(&mut self, stream: &StreamReply) -> Result<(), Stop> {
        self.delta(json!({"role": "assistant", "content": ""}), None).await?;
        for step in &stream.steps {
            let piece = piece(step, &self.ctx);
            self.write_piece(piece).await?;
        }
        match &stream.end {
            StreamEnd::Completed => {
                let finish = if self.tool_index > 0 { "tool_calls" } else { "stop" };
                self.delta(json!({}), Some(finish)).await?;
                if let Some(usage) = stream.usage.filter(|_| self.ctx.include_usage) {
                    let chunk = json!({
                        "id": self.id, "object": "chat.completion.chunk", "created": self.created,
                        "model": self.ctx.model, "choices": [], "usage": usage_json(usage),
                    });
                    self.data(&chunk).await?;
                }
                self.sink.frame("data: [DONE]\n\n".to_owned()).await
            }
            StreamEnd::Failed { code, message } => {
                self.data(&json!({"error": {"message": message, "type": code, "param": null, "code": code}})).await
            }
            StreamEnd::Close => Ok(()),
        }
    }

    async fn write_piece(&mut self, piece: Piece<'_>) -> Result<(), Stop> {
        match piece {
            Piece::Thinking(summary) => {
                for delta in summary {
                    self.delta(json!({"reasoning_content": delta}), None).await?;
                }
                Ok(())
            }
            Piece::Text(message) => {
                for beat in beats(message) {
                    match beat {
                        Beat::Delta(text) => self.delta(json!({"content": text}), None).await?,
                        Beat::Wait(gate) => self.sink.wait_gate(gate).await?,
                        Beat::Pause(duration) => self.sink.pause(duration).await?,
                    }
                }
                Ok(())
            }
            Piece::ToolCall { name, args, id } => {
                let index = self.tool_index;
                self.tool_index += 1;
                let id = id.unwrap_or_else(|| self.ids.next("call"));
                self.delta(
                    json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                        "function": {"name": name, "arguments": ""}}]}),
                    None,
                )
                .await?;
                let text = args.to_string();
                for part in halves(&text) {
                    self.delta(json!({"tool_calls": [{"index": index, "function": {"arguments": part}}]}), None)
                        .await?;
                }
                Ok(())
            }
            Piece::Wait(gate) => self.sink.wait_gate(gate).await,
            Piece::Sleep(duration) => self.sink.pause(duration).await,
            Piece::Raw(event) => self.data(event).await,
        }
    }
}

/// The whole reply as one `chat.completion` (`stream` not true).
pub(crate) fn completion_json(stream: &StreamReply, ctx: &CallContext) -> Value {
    let mut ids = Ids::new(ctx.seq);
    let id = ids.next("chatcmpl");
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut calls = Vec::new();
    for block in blocks(&stream.steps, ctx) {
        match block {
            Block::Thinking(t) => reasoning.push_str(&t),
            Block::Text(t) => text.push_str(&t),
            Block::ToolCall { name, args, id } => calls.push(json!({
                "id": id.unwrap_or_else(|| ids.next("call")), "type": "function",
                "function": {"name": name, "arguments": args.to_string()}
            })),
        }
    }
    let finish = if calls.is_empty() { "stop" } else { "tool_calls" };
    let mut message = json!({"role": "assistant", "content": if text.is_empty() && !calls.is_empty() { Value::Null } else { json!(text) }});
    if let Some(obj) = message.as_object_mut() {
        if !reasoning.is_empty() {
            obj.insert("reasoning_content".to_owned(), json!(reasoning));
        }
        if !calls.is_empty() {
            obj.insert("tool_calls".to_owned(), Value::Array(calls));
        }
    }
    let mut completion = json!({
        "id": id, "object": "chat.completion", "created": now_secs(), "model": ctx.model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    });
    if let (Some(usage), Some(obj)) = (stream.usage, completion.as_object_mut()) {
        obj.insert("usage".to_owned(), usage_json(usage));
    }
    completion
}
