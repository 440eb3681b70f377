//! What a reply's [`Step`]s become in the dialects other than Responses: text, thinking and tool
//! calls, whatever the wire format. `Shell` and `WriteFile` are resolved here against the tools
//! the request offers.

use std::time::Duration;

use serde_json::{Value, json};

use crate::dialect::{Dialect, OfferedTool, shell_call, write_call};
use crate::reply::{Gate, MessageStep, Step};

/// What the writers need to know about the request they answer (the server fills it in from the
/// request's readers, which sit above the writers).
pub(crate) struct CallContext {
    pub(crate) dialect: Dialect,
    pub(crate) seq: u64,
    /// The model the request named (echoed back; Claude Code shows it).
    pub(crate) model: String,
    pub(crate) tools: Vec<OfferedTool>,
    pub(crate) cwd: Option<String>,
    /// Chat completions: the client asked for a usage chunk (`stream_options.include_usage`).
    pub(crate) include_usage: bool,
}

/// One step, as the chat-style dialects see it.
pub(crate) enum Piece<'a> {
    Thinking(&'a [String]),
    Text(&'a MessageStep),
    ToolCall {
        name: String,
        args: Value,
        id: Option<String>,
    },
    Wait(&'a Gate),
    Sleep(Duration),
    /// Sent verbatim as one event.
    Raw(&'a Value),
}

pub(crate) fn piece<'a>(step: &'a Step, ctx: &CallContext) -> Piece<'a> {
    match step {
        Step::Reasoning { summary } => Piece::Thinking(summary),
        Step::Message(message) => Piece::Text(message),
        Step::FunctionCall { name, arguments, call_id } => {
            Piece::ToolCall { name: name.clone(), args: arguments_object(arguments), id: call_id.clone() }
        }
        Step::CustomToolCall { name, input, call_id } => {
            Piece::ToolCall { name: name.clone(), args: json!({"input": input}), id: call_id.clone() }
        }
        Step::Shell { command, .. } => {
            let (name, args) = shell_call(ctx.dialect, &ctx.tools, command);
            Piece::ToolCall { name, args, id: None }
        }
        Step::WriteFile { path, content } => {
            let (name, args) = write_call(ctx.dialect, &ctx.tools, path, content, ctx.cwd.as_deref());
            Piece::ToolCall { name, args, id: None }
        }
        Step::ApplyPatch { patch } => {
            Piece::ToolCall { name: "apply_patch".to_owned(), args: json!({"input": patch}), id: None }
        }
        Step::Wait(gate) => Piece::Wait(gate),
        Step::Sleep(duration) => Piece::Sleep(*duration),
        Step::RawEvent(event) => Piece::Raw(event),
    }
}

/// Tool arguments as a JSON object: Anthropic's `input` and Gemini's `args` must be objects,
/// while [`Step::FunctionCall`] carries JSON text (codex's format). Text that is not an object
/// is wrapped as `{"input": …}`.
fn arguments_object(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        Ok(other) => json!({"input": other}),
        Err(_) => json!({"input": arguments}),
    }
}

/// A reply flattened for a non-streaming answer: pacing (delays, gates, sleeps) is dropped.
pub(crate) enum Block {
    Thinking(String),
    Text(String),
    ToolCall { name: String, args: Value, id: Option<String> },
}

pub(crate) fn blocks(steps: &[Step], ctx: &CallContext) -> Vec<Block> {
    steps
        .iter()
        .filter_map(|step| match piece(step, ctx) {
            Piece::Thinking(summary) => Some(Block::Thinking(summary.concat())),
            Piece::Text(message) => Some(Block::Text(message.text())),
            Piece::ToolCall { name, args, id } => Some(Block::ToolCall { name, args, id }),
            Piece::Wait(_) | Piece::Sleep(_) | Piece::Raw(_) => None,
        })
        .collect()
}
