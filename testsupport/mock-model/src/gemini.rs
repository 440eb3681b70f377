//! Gemini (`POST /v1beta/models/{model}:streamGenerateContent?alt=sse` and `:generateContent`),
//! as Gemini CLI calls it: reading its requests, and answering with `data:` chunks that are each
//! a `GenerateContentResponse` (no `event:` lines: the SDK's parser only accepts `data:`), the
//! last one carrying `finishReason` and `usageMetadata`.

use serde_json::{Value, json};

use crate::dialect::OfferedTool;
use crate::pieces::{Block, CallContext, Piece, blocks, piece};
use crate::reply::{StreamEnd, StreamReply, Usage};
use crate::request::{ToolOutput, is_context_wrapper};
use crate::sse::{Beat, Ids, Sink, Stop, beats};

// ---------------------------------------------------------------- requests

fn contents(body: &Value) -> &[Value] {
    body.get("contents").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

fn parts(content: &Value) -> &[Value] {
    content.get("parts").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

/// A content without a role is the user's (the API's default).
fn is_user(content: &Value) -> bool {
    content.get("role").and_then(Value::as_str).is_none_or(|r| r == "user")
}

/// The model from the path: `/v1beta/models/{model}:…`.
pub(crate) fn model_in_path(path: &str) -> Option<&str> {
    let rest = path.split_once("/models/")?.1;
    Some(rest.split_once(':').map_or(rest, |(model, _)| model))
}

/// Text parts of user contents, leaving out thoughts and Gemini CLI's `<session_context>` part.
pub(crate) fn user_texts(body: &Value) -> Vec<String> {
    contents(body)
        .iter()
        .filter(|c| is_user(c))
        .filter_map(|c| {
            let texts: Vec<&str> = parts(c)
                .iter()
                .filter(|p| !p.get("thought").and_then(Value::as_bool).unwrap_or(false))
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .filter(|t| !is_context_wrapper(t))
                .collect();
            (!texts.is_empty()).then(|| texts.concat())
        })
        .collect()
}

/// A `functionResponse` part as a tool result. Gemini CLI reports success as
/// `response: {"output": …}` and a rejected or failed call as `response: {"error": …}`.
fn function_response(part: &Value) -> Option<ToolOutput> {
    let fr = part.get("functionResponse")?;
    let response = fr.get("response");
    let error = response.and_then(|r| r.get("error"));
    let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
    let output = match (error, response.and_then(|r| r.get("output"))) {
        (Some(e), _) => text(e),
        (None, Some(o)) => text(o),
        (None, None) => response.map(Value::to_string).unwrap_or_default(),
    };
    Some(ToolOutput {
        kind: "functionResponse".to_owned(),
        call_id: fr.get("id").and_then(Value::as_str).unwrap_or_default().to_owned(),
        name: fr.get("name").and_then(Value::as_str).map(str::to_owned),
        output,
        is_error: error.is_some(),
    })
}

pub(crate) fn tool_outputs(body: &Value) -> Vec<ToolOutput> {
    contents(body).iter().filter(|c| is_user(c)).flat_map(parts).filter_map(function_response).collect()
}

pub(crate) fn trailing_tool_output(body: &Value) -> Option<ToolOutput> {
    let last = contents(body).last().filter(|c| is_user(c))?;
    parts(last).iter().filter_map(function_response).next_back()
}

pub(crate) fn tools(body: &Value) -> Vec<OfferedTool> {
    body.get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("functionDeclarations").and_then(Value::as_array))
        .flatten()
        .filter_map(|d| {
            let name = d.get("name").and_then(Value::as_str)?;
            let schema = d.get("parametersJsonSchema").or_else(|| d.get("parameters")).cloned();
            Some(OfferedTool { name: name.to_owned(), schema })
        })
        .collect()
}

pub(crate) fn system_text(body: &Value) -> String {
    match body.get("systemInstruction") {
        Some(Value::String(s)) => s.clone(),
        Some(instruction) => parts(instruction)
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        None => String::new(),
    }
}

/// The JSON schema the request wants the answer to follow (Gemini CLI's model router sends
/// `generationConfig.responseJsonSchema`). A request for JSON without a schema gets `{}`.
pub(crate) fn output_schema(body: &Value) -> Option<&Value> {
    let config = body.get("generationConfig")?;
    config.get("responseJsonSchema").or_else(|| config.get("responseSchema")).or_else(|| {
        (config.get("responseMimeType").and_then(Value::as_str) == Some("application/json")).then_some(&Value::Null)
    })
}

// ---------------------------------------------------------------- answers

fn usage_json(usage: Usage) -> Value {
    json!({
        "promptTokenCount": usage.input_tokens,
        "candidatesTokenCount": usage.output_tokens,
        "totalTokenCount": usage.input_tokens + usage.output_tokens,
        "cachedContentTokenCount": usage.cached_input_tokens,
        "thoughtsTokenCount": usage.reasoning_output_tokens,
    })
}

fn function_call(name: &str, args: &Value, id: Option<&str>) -> Value {
    // No id unless scripted: the real API sends none and Gemini CLI makes one up.
    match id {
        Some(id) => json!({"functionCall": {"name": name, "args": args, "id": id}}),
        None => json!({"functionCall": {"name": name, "args": args}}),
    }
}

pub(crate) struct Writer {
    sink: Sink,
    ctx: CallContext,
    response_id: String,
}

impl Writer {
    pub(crate) fn new(sink: Sink, ctx: CallContext) -> Self {
        let response_id = Ids::new(ctx.seq).next("resp");
        Self { sink, ctx, response_id }
    }

    async fn data(&mut self, value: &Value) -> Result<(), Stop> {
        self.sink.frame(format!("data: {value}\n\n")).await
    }

    async fn chunk(&mut self, part: Value) -> Result<(), Stop> {
        let chunk = json!({
            "candidates": [{"content": {"role": "model", "parts": [part]}, "index": 0}],
            "modelVersion": self.ctx.model, "responseId": self.response_id,
        });
        self.data(&chunk).await
    }

    pub(crate) async fn write_all(&mut self, stream: &StreamReply) -> Result<(), Stop> {
        for step in &stream.steps {
            let piece = piece(step, &self.ctx);
            self.write_piece(piece).await?;
        }
        match &stream.end {
            StreamEnd::Completed => {
                // A model content with no parts is valid to Gemini CLI; a part with empty text
                // is not.
                let mut last = json!({
                    "candidates": [{"content": {"role": "model", "parts": []}, "finishReason": "STOP", "index": 0}],
                    "modelVersion": self.ctx.model, "responseId": self.response_id,
                });
                if let (Some(usage), Some(obj)) = (stream.usage, last.as_object_mut()) {
                    obj.insert("usageMetadata".to_owned(), usage_json(usage));
                }
                self.data(&last).await
            }
            StreamEnd::Failed { code, message } => {
                // The SDK recognises an error in a stream as a bare JSON object in its own read,
                // not as a `data:` line.
                let error = json!({"error": {"code": 500, "message": message, "status": code}});
                self.sink.frame(format!("{error}\n")).await
            }
            StreamEnd::Close => Ok(()),
        }
    }

    async fn write_piece(&mut self, piece: Piece<'_>) -> Result<(), Stop> {
        match piece {
            Piece::Thinking(summary) => {
                for delta in summary {
                    self.chunk(json!({"text": delta, "thought": true})).await?;
                }
                Ok(())
            }
            Piece::Text(message) => {
                for beat in beats(message) {
                    match beat {
                        Beat::Delta(text) => self.chunk(json!({"text": text})).await?,
                        Beat::Wait(gate) => self.sink.wait_gate(gate).await?,
                        Beat::Pause(duration) => self.sink.pause(duration).await?,
                    }
                }
                Ok(())
            }
            Piece::ToolCall { name, args, id } => self.chunk(function_call(&name, &args, id.as_deref())).await,
            Piece::Wait(gate) => self.sink.wait_gate(gate).await,
            Piece::Sleep(duration) => self.sink.pause(duration).await,
            Piece::Raw(event) => self.data(event).await,
        }
    }
}

/// The whole reply as one `GenerateContentResponse` (`:generateContent`).
pub(crate) fn response_json(stream: &StreamReply, ctx: &CallContext) -> Value {
    let parts: Vec<Value> = blocks(&stream.steps, ctx)
        .into_iter()
        .map(|block| match block {
            Block::Thinking(text) => json!({"text": text, "thought": true}),
            Block::Text(text) => json!({"text": text}),
            Block::ToolCall { name, args, id } => function_call(&name, &args, id.as_deref()),
        })
        .collect();
    let mut response = json!({
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "modelVersion": ctx.model, "responseId": Ids::new(ctx.seq).next("resp"),
    });
    if let (Some(usage), Some(obj)) = (stream.usage, response.as_object_mut()) {
        obj.insert("usageMetadata".to_owned(), usage_json(usage));
    }
    response
}
