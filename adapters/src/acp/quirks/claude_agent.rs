//! Claude Code through `@agentclientprotocol/claude-agent-acp`: a string `rawInput.command`, and
//! its output as the call's content.

use super::{Known, Quirks};

pub(super) const QUIRKS: Quirks = Quirks {
    agent: "@agentclientprotocol/claude-agent-acp",
    output_fields: &["output", "stdout"],
    exit_code_fields: &["exit_code", "exitCode"],
    argv_commands: false,
    mode_update_prefix: None,
    missing_file_reads_empty: false,
    command: "claude-agent-acp",
    isolation: Known { network: &["api.anthropic.com:443"], home: &["~/.claude", "~/.claude.json"] },
};
