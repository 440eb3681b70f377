//! `ensemble-acp-test-agent`: a deterministic ACP v1 agent for testing Ensemble's ACP client adapter.
//!
//! It speaks ACP v1 (newline-delimited JSON-RPC 2.0) on stdin/stdout, built on the agent side of the
//! `agent-client-protocol` crate. It has no model: what it does in a turn is decided by the prompt's
//! text (the concatenation of its text blocks, trimmed), whose first word is a *directive*. This lets a
//! test drive the client side through edge cases a real agent cannot be made to produce on demand:
//! permission requests, cancellation, tool calls with diffs, plans, usage, file-system requests,
//! unknown requests, floods of updates, garbage on stdout and crashes.
//!
//! | prompt | what the agent does |
//! |---|---|
//! | *anything else* | `agent_thought_chunk` "thinking about TEXT", then `echo: TEXT [mode=M model=X]` as three `agent_message_chunk`s with one `messageId`; recorded in the session history; `end_turn` |
//! | `tool` | `tool_call` call-1 (execute, pending) → `tool_call_update` in_progress with text "hi\n" → completed with `rawOutput`; `tool_call` call-2 (edit, completed, a diff of `CWD/a.txt`); `plan`; `usage_update`; "done"; `end_turn` |
//! | `permission` | `tool_call` call-p, then `session/request_permission` (allow/always/reject/never); selected X → `tool_call_update` completed (X starts with "allow") or failed, "permission: X", `end_turn`; cancelled → `cancelled` |
//! | `slow` | "working", then waits for `session/cancel` of this session → `cancelled` |
//! | `crash` | "about to crash" (flushed), then exit status 3 |
//! | `garbage` | three lines that are not JSON-RPC written straight to stdout, then "after garbage", `end_turn` |
//! | `flood N` | N `agent_message_chunk`s "x" (N ≤ 100000), `end_turn` |
//! | `read PATH` | `fs/read_text_file`; "read ok: CONTENT" or "read error: CODE MESSAGE"; `end_turn` |
//! | `write PATH TEXT…` | `fs/write_text_file`; "write ok" or "write error: CODE MESSAGE"; `end_turn` |
//! | `write-many N PATH` | N `fs/write_text_file` requests to PATH at once (a hostile agent); "write-many: ok=K errors=E1 \| E2…" (distinct errors); `end_turn` |
//! | `unknown-request` | request `_ensemble/unknown`; "unknown: CODE" (or "unknown: answered"); `end_turn` |
//! | `refuse` / `max-tokens` / `max-turn-requests` | stop reason `refusal` / `max_tokens` / `max_turn_requests` |
//! | `title T…` | `session_info_update` with title T…, "titled", `end_turn` |
//! | `terminal SCRIPT` | `terminal/create` of `sh -c SCRIPT`, tool call `call-t` showing it, `terminal/wait_for_exit`, `terminal/output`, `terminal/release`; "terminal exit CODE: OUTPUT" (lines joined by " \| "), `end_turn` |
//! | `terminal-leave SCRIPT` | the same, but "started" right after `terminal/create`, never released |
//! | `unauthenticated` | the prompt fails with -32000 (authentication required) |
//! | `elicit` | `elicitation/create` (a form: `color` red/blue, required; `sure` yes/no); "elicited: RESPONSE" (the JSON answer), `end_turn` |
//!
//! | `history` | "history: P1 \| P2…" (the prompts of the session's history, a fork's inherited ones included), `end_turn` |
//!
//! Flags: `--load` (advertise and serve `session/load`, replaying the history before answering),
//! `--fork` (advertise and serve `session/fork`: a new session with a copy of the history, in the given cwd),
//! `--auth-required` (`session/new` fails with -32000 "authentication required", and `initialize` lists an
//! `api-key` auth method), `--list` (advertise and serve `session/list`: the sessions of the state dir, titled by their first prompt,
//! those of the request's `cwd` when it names one),
//! `--images` (advertise `promptCapabilities.image` and `embeddedContext`). A prompt's blocks that are not
//! text are described after its text: `[image MIME N bytes]`, `[link NAME URI]`, `[resource URI N bytes]`.
//! `--state-dir DIR` (persist sessions as `DIR/<session id>.json` so a later process can load them),
//! `--hang-initialize` (never answer `initialize`; read stdin until EOF, then exit 0). An unknown flag
//! exits with status 2. `session/close` is always advertised and served.
//!
//! Every outgoing JSON-RPC line is written whole under the stdout lock by one writer thread, so the
//! `garbage` lines (also written under that lock) never land inside a protocol line.

mod agent;
mod io;
mod store;

use std::path::PathBuf;
use std::process::ExitCode;

/// The command-line options.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `--load`: advertise `loadSession` and serve `session/load`.
    pub load: bool,
    /// `--state-dir DIR`: persist sessions there.
    pub state_dir: Option<PathBuf>,
    /// `--hang-initialize`: never answer `initialize`.
    pub hang_initialize: bool,
    /// `--fork`: advertise and serve `session/fork`.
    pub fork: bool,
    /// `--images`: advertise `promptCapabilities.image` and `embeddedContext`.
    pub images: bool,
    /// `--list`: advertise and serve `session/list` (the sessions of the state dir).
    pub list: bool,
    /// `--auth-required`: `session/new` fails with ACP's "authentication required" (-32000).
    pub auth_required: bool,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options::default();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--load" => options.load = true,
            "--hang-initialize" => options.hang_initialize = true,
            "--fork" => options.fork = true,
            "--images" => options.images = true,
            "--list" => options.list = true,
            "--auth-required" => options.auth_required = true,
            "--state-dir" => match args.next() {
                Some(dir) => options.state_dir = Some(PathBuf::from(dir)),
                None => return Err("--state-dir needs a directory".to_owned()),
            },
            other => {
                if let Some(dir) = other.strip_prefix("--state-dir=") {
                    options.state_dir = Some(PathBuf::from(dir));
                } else {
                    return Err(format!(
                        "unknown argument {other:?} (flags: --load, --fork, --images, --list, --auth-required, --state-dir DIR, --hang-initialize)"
                    ));
                }
            }
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    let options = match parse_args(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("ensemble-acp-test-agent: {message}");
            return ExitCode::from(2);
        }
    };
    eprintln!("ensemble-acp-test-agent: started pid={}", std::process::id());

    if options.hang_initialize {
        // Never answer anything: read stdin until EOF, then exit 0.
        let _drained = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
        return ExitCode::SUCCESS;
    }

    if let Some(dir) = &options.state_dir
        && let Err(error) = std::fs::create_dir_all(dir)
    {
        eprintln!("ensemble-acp-test-agent: cannot create state dir {}: {error}", dir.display());
        return ExitCode::from(2);
    }

    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("ensemble-acp-test-agent: cannot start the runtime: {error}");
            return ExitCode::from(1);
        }
    };
    let (transport, writer) = io::stdio_lines();
    let result = runtime.block_on(agent::serve(options, transport));
    let code = match result {
        Ok(()) => 0,
        Err(error) if agent_client_protocol::is_incoming_transport_closed(&error) => 0,
        Err(error) => {
            eprintln!("ensemble-acp-test-agent: connection ended: {error}");
            1
        }
    };
    // Let the writer thread put out what is queued, then exit without waiting for blocked readers.
    writer.finish(std::time::Duration::from_secs(2));
    eprintln!("ensemble-acp-test-agent: exiting status={code}");
    std::process::exit(code)
}

#[cfg(test)]
mod tests {
    use super::parse_args;

    fn args(list: &[&str]) -> impl Iterator<Item = String> {
        list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>().into_iter()
    }

    #[test]
    fn flags_parse() {
        let options = parse_args(args(&["--load", "--fork", "--state-dir", "/tmp/x", "--hang-initialize"])).unwrap();
        assert!(options.load && options.fork && options.hang_initialize);
        assert_eq!(options.state_dir.unwrap().to_str(), Some("/tmp/x"));
        assert!(parse_args(args(&["--state-dir"])).is_err());
        assert!(parse_args(args(&["--bogus"])).is_err());
        assert!(parse_args(args(&["positional"])).is_err());
    }
}
