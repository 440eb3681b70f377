//! `@agentclientprotocol/codex-acp` (2.x, which runs `codex app-server`).

use super::Quirks;

pub(super) const QUIRKS: Quirks = Quirks {
    agent: "@agentclientprotocol/codex-acp",
    output_fields: &["output", "stdout"],
    exit_code_fields: &["exit_code", "exitCode"],
    argv_commands: false,
    mode_update_prefix: None,
    missing_file_reads_empty: false,
};
