//! `codex-acp` (`@zed-industries/codex-acp`): an execute call's `rawInput.command` is codex's
//! argv (`["bash", "-lc", SCRIPT]`), and its `rawOutput` is codex's exec result, whose
//! `aggregated_output` is stdout and stderr interleaved as the user saw them (`formatted_output`
//! is the same, reformatted for the model).

use super::{Known, Quirks};

pub(super) const QUIRKS: Quirks = Quirks {
    agent: "codex-acp",
    output_fields: &["aggregated_output", "formatted_output", "stdout"],
    exit_code_fields: &["exit_code"],
    argv_commands: true,
    mode_update_prefix: None,
    missing_file_reads_empty: false,
    command: "codex-acp",
    isolation: Known {
        network: &["api.openai.com:443", "chatgpt.com:443", "auth.openai.com:443"],
        home: &["~/.codex"],
    },
};
