//! An agent Ensemble has no file for: every shape the known agents use is accepted, so a new
//! agent shows its commands and their output if it follows any of them.

use super::{Known, Quirks};

pub(super) const QUIRKS: Quirks = Quirks {
    agent: "*",
    output_fields: &["aggregated_output", "formatted_output", "output", "stdout"],
    exit_code_fields: &["exit_code", "exitCode", "/metadata/exit"],
    argv_commands: true,
    mode_update_prefix: None,
    missing_file_reads_empty: false,
    command: "",
    isolation: Known { network: &[], home: &[] },
};
