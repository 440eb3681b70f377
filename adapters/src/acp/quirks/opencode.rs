//! opencode (`opencode acp`).

use super::Quirks;

pub(super) const QUIRKS: Quirks = Quirks {
    agent: "OpenCode",
    output_fields: &["output", "stdout"],
    exit_code_fields: &["exit_code", "exitCode"],
    argv_commands: false,
    mode_update_prefix: None,
    missing_file_reads_empty: false,
};
