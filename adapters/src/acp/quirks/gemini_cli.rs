//! Gemini CLI (`gemini --acp`, 0.61.0), which reports itself as `gemini-cli`.
//!
//! - A change of its approval mode (`session/set_mode`, or its own `enter_plan_mode` tool) comes as
//!   an `agent_message_chunk` `[MODE_UPDATE] <mode>`, never as `current_mode_update`.
//! - Its `write_file` reads the file first through `fs/read_text_file`, and gives up without
//!   asking permission when that is an error: a file that does not exist must read empty.
//! - It names a session's file by the UTC minute `session/new` ran in, and `session/load` first
//!   starts a new recording under the name of the current minute: in that same minute, it starts
//!   the session's own file over and the history is lost ("No previous sessions found"). So a load
//!   waits that minute out (`LOAD_AFTER_START_MINUTE` in `quirks`).
//! - A permission request comes without a `tool_call` before it (the call is only announced once
//!   it ran), and after a rejection the call is never updated. Its options are `proceed_always`
//!   (`allow_always`), `proceed_once` (`allow_once`) and `cancel` (`reject_once`).
//! - An execute call's update has no output (`content: []`, no `rawOutput`).

use super::{Known, Quirks};

pub(super) const QUIRKS: Quirks = Quirks {
    agent: "gemini-cli",
    output_fields: &["output", "stdout"],
    exit_code_fields: &["exit_code", "exitCode"],
    argv_commands: false,
    mode_update_prefix: Some("[MODE_UPDATE]"),
    missing_file_reads_empty: true,
    command: "gemini",
    isolation: Known {
        network: &[
            "generativelanguage.googleapis.com:443",
            "cloudcode-pa.googleapis.com:443",
            "oauth2.googleapis.com:443",
        ],
        home: &["~/.gemini"],
    },
};
