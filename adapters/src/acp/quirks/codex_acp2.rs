//! `@agentclientprotocol/codex-acp` (2.x, which runs `codex app-server`): `rawInput.command` is a
//! string. A command that runs in a terminal has no `rawOutput`: its output comes in pieces in the
//! tool call's `_meta` (`terminal_output_delta: {data}` for a client that declared no terminal
//! convention, as Ensemble does; `terminal_output` for one that declared Zed's), and its exit code
//! in `_meta.terminal_exit.exit_code` (null when the command did not run). Only a command without a
//! terminal has a `rawOutput`, `{exit_code}`.

use super::{Known, Quirks, TerminalMeta};

pub(super) const QUIRKS: Quirks = Quirks {
    agent: "@agentclientprotocol/codex-acp",
    output_fields: &["output", "stdout"],
    exit_code_fields: &["exit_code", "exitCode"],
    argv_commands: false,
    mode_update_prefix: None,
    missing_file_reads_empty: false,
    command: "codex-acp",
    isolation: Known {
        network: &["api.openai.com:443", "chatgpt.com:443", "auth.openai.com:443"],
        home: &["~/.codex"],
    },
};

pub(super) const TERMINAL_META: TerminalMeta =
    TerminalMeta { output_keys: &["terminal_output_delta", "terminal_output"], exit_key: "terminal_exit" };
