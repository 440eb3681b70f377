//! What ACP agents do differently, one file per agent, chosen by the identity the agent reports
//! in `initialize` (`agentInfo.name`). The protocol leaves a tool call's `rawInput` and
//! `rawOutput` free-form; each agent fills them its own way, and this is where that knowledge
//! lives. An agent without a file of its own gets [`generic`], which accepts every shape the
//! known agents use.

mod claude_agent;
mod codex_acp;
mod codex_acp2;
mod gemini_cli;
mod generic;
mod opencode;

use serde_json::Value;

pub use crate::kit::sandbox::Known;

/// How one agent shapes what the protocol leaves free.
#[derive(Debug)]
pub struct Quirks {
    /// The agent's `agentInfo.name` this applies to (`*` for the generic one).
    pub agent: &'static str,
    /// Fields of an execute call's `rawOutput` object holding the command's output, by preference.
    pub output_fields: &'static [&'static str],
    /// Fields of `rawOutput` holding the exit code (or JSON pointers into it, `/metadata/exit`).
    pub exit_code_fields: &'static [&'static str],
    /// Whether `rawInput.command` may be an argv (`["bash", "-lc", SCRIPT]`) rather than a string.
    pub argv_commands: bool,
    /// A message chunk starting with this is the agent saying its mode changed, not text for the
    /// user (Gemini CLI's `[MODE_UPDATE] <mode>`).
    pub mode_update_prefix: Option<&'static str>,
    /// `fs/read_text_file` of a file that does not exist answers empty content rather than an
    /// error (an agent that reads a file before it writes it, and gives up on the error).
    pub missing_file_reads_empty: bool,
    /// The name of the agent's command (how its providers entry names it, before it says who it
    /// is in `initialize`).
    pub command: &'static str,
    /// What its isolation needs by default: its model API's endpoints, its configuration and
    /// login under the home.
    pub isolation: Known,
}

const KNOWN: &[&Quirks] =
    &[&claude_agent::QUIRKS, &codex_acp::QUIRKS, &codex_acp2::QUIRKS, &gemini_cli::QUIRKS, &opencode::QUIRKS];

/// The quirks of the agent that reported `name` (the generic ones when it is not known).
pub fn for_agent(name: Option<&str>) -> &'static Quirks {
    name.and_then(|n| KNOWN.iter().copied().find(|q| q.agent == n)).unwrap_or(&generic::QUIRKS)
}

/// What the agent run by `command` is known to need in its box (by the command's name; nothing
/// for an agent not known).
pub fn known_for_command(command: &std::path::Path) -> Known {
    let name = command.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    KNOWN.iter().find(|q| q.command == name).map(|q| q.isolation).unwrap_or_default()
}

/// The agents whose `session/load` must not run in the UTC minute their `session/new` ran in (it
/// would lose the session: see `gemini_cli`), by reported name.
const LOAD_AFTER_START_MINUTE: &[&str] = &[gemini_cli::QUIRKS.agent];

impl Quirks {
    /// Whether `session/load` waits until the UTC minute the agent created the session in is over.
    pub fn load_after_start_minute(&self) -> bool {
        LOAD_AFTER_START_MINUTE.contains(&self.agent)
    }
}

/// Where an agent reports a command run in a terminal in the tool call's `_meta` rather than in
/// `rawOutput` (Zed's convention): its output in pieces as it runs, its exit code at the end.
#[derive(Debug)]
pub struct TerminalMeta {
    /// `_meta` keys whose `data` is the next piece of the output, by preference.
    pub output_keys: &'static [&'static str],
    /// The `_meta` key whose `exit_code` is the command's exit code.
    pub exit_key: &'static str,
}

/// The agents that report terminal commands in `_meta`, by reported name (the generic agent takes
/// every known shape).
const TERMINAL_META: &[(&str, &TerminalMeta)] =
    &[(codex_acp2::QUIRKS.agent, &codex_acp2::TERMINAL_META), (generic::QUIRKS.agent, &codex_acp2::TERMINAL_META)];

impl Quirks {
    /// The command an execute call runs: its raw input's `command` (a string, or an argv whose
    /// last element is the script when it is `sh -c …`).
    pub fn command(&self, raw_input: &Value) -> Option<String> {
        match raw_input.get("command")? {
            Value::String(s) => Some(s.clone()),
            Value::Array(argv) if self.argv_commands => {
                let words: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
                match words.as_slice() {
                    [shell, flag, script] if shell.ends_with("sh") && flag.ends_with('c') => Some((*script).to_owned()),
                    _ if !words.is_empty() => Some(words.join(" ")),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// A call's output from its raw output: a string, or one of the agent's output fields.
    pub fn output(&self, raw: &Value) -> Option<String> {
        match raw {
            Value::String(s) => Some(s.clone()),
            Value::Object(_) => {
                self.output_fields.iter().find_map(|k| raw.get(*k).and_then(Value::as_str)).map(str::to_owned)
            }
            _ => None,
        }
    }

    /// A call's exit code from its raw output (a field starting with `/` is a JSON pointer).
    pub fn exit_code(&self, raw: &Value) -> Option<i32> {
        self.exit_code_fields
            .iter()
            .find_map(|k| if k.starts_with('/') { raw.pointer(k) } else { raw.get(*k) }.and_then(Value::as_i64))
            .and_then(|c| i32::try_from(c).ok())
    }

    /// The next piece of a terminal command's output and its exit code, from a tool call's
    /// `_meta`, for an agent that reports them there (see [`TerminalMeta`]).
    pub fn terminal_meta(&self, meta: Option<&serde_json::Map<String, Value>>) -> (Option<String>, Option<i32>) {
        let Some((_, t)) = TERMINAL_META.iter().find(|(agent, _)| *agent == self.agent) else { return (None, None) };
        let Some(meta) = meta else { return (None, None) };
        let output = t.output_keys.iter().find_map(|k| meta.get(*k)?.get("data")?.as_str()).map(str::to_owned);
        let exit = meta.get(t.exit_key).and_then(|e| e.get("exit_code")?.as_i64()).and_then(|c| i32::try_from(c).ok());
        (output, exit)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn agents_are_told_apart_by_their_reported_name() {
        assert_eq!(for_agent(Some("codex-acp")).agent, "codex-acp");
        assert_eq!(for_agent(Some("someone-else")).agent, "*");
        assert_eq!(for_agent(None).agent, "*");
    }

    #[test]
    fn codex_acp_argv_and_output_fields() {
        let q = for_agent(Some("codex-acp"));
        assert_eq!(q.command(&json!({"command": ["bash", "-lc", "ls -la"]})).as_deref(), Some("ls -la"));
        assert_eq!(q.command(&json!({"command": ["git", "status"]})).as_deref(), Some("git status"));
        let raw = json!({"exit_code": 2, "formatted_output": "f", "aggregated_output": "a"});
        assert_eq!((q.output(&raw).as_deref(), q.exit_code(&raw)), (Some("a"), Some(2)));
    }

    #[test]
    fn the_generic_agent_takes_every_known_shape() {
        let q = for_agent(None);
        assert_eq!(q.command(&json!({"command": "make test"})).as_deref(), Some("make test"));
        assert_eq!(q.command(&json!({"command": ["sh", "-c", "x"]})).as_deref(), Some("x"));
        assert_eq!(q.output(&json!({"stdout": "o", "exitCode": 1})).as_deref(), Some("o"));
        assert_eq!(q.exit_code(&json!({"exitCode": 1})), Some(1));
        assert_eq!(q.output(&json!("plain")).as_deref(), Some("plain"));
        assert_eq!(q.command(&json!({"cmd": "x"})), None);
    }
}
