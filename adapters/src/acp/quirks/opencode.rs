//! opencode (`opencode acp`, which reports itself as `OpenCode`): a string `rawInput.command`; a
//! finished bash call's `rawOutput` is `{output, metadata: {output, exit, truncated}}` (a rejected
//! or failed one `{error}`), so the exit code is `metadata.exit`.

use super::{Known, Quirks};

pub(super) const QUIRKS: Quirks = Quirks {
    agent: "OpenCode",
    output_fields: &["output"],
    exit_code_fields: &["/metadata/exit"],
    argv_commands: false,
    mode_update_prefix: None,
    missing_file_reads_empty: false,
    command: "opencode",
    isolation: Known {
        network: &["opencode.ai:443", "models.dev:443"],
        home: &["~/.config/opencode", "~/.local/share/opencode", "~/.local/state/opencode"],
    },
};

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn output_and_exit_code_of_a_bash_call() {
        let q = super::super::for_agent(Some("OpenCode"));
        let raw = json!({"output": "hi\n", "metadata": {"output": "hi\n", "exit": 2, "truncated": false}});
        assert_eq!((q.output(&raw).as_deref(), q.exit_code(&raw)), (Some("hi\n"), Some(2)));
        assert_eq!(q.command(&json!({"command": "echo hi", "description": "d"})).as_deref(), Some("echo hi"));
        let rejected = json!({"error": "The user rejected permission to use this specific tool call."});
        assert_eq!((q.output(&rejected), q.exit_code(&rejected)), (None, None));
    }
}
