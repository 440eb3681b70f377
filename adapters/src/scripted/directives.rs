//! The scripted agent's input language: a turn's lines as directives, the commands it
//! advertises, and the keywords of goal objectives.

use std::sync::LazyLock;

use ensemble_core::event::CommandInfo;
use ensemble_core::shared_list::SharedList;

/// Most continuation turns one goal may ask for.
const MAX_GOAL_STEPS: u64 = 20;

/// One line of scripted input.
#[derive(Clone, Debug, PartialEq)]
pub enum Directive {
    /// Plain text: echoed back.
    Say(String),
    /// An image or file of the turn's input, described back (never parsed from text).
    Received(String),
    /// `/tool NAME [ARGS]`: a simulated tool call.
    Tool { name: String, args: String },
    /// `/edit PATH [TEXT]`, `/write PATH [TEXT]`, `/delete PATH`: a real change of a file inside
    /// the session's cwd (TEXT's `\n`s separate lines), with its unified diff.
    File { op: FileOp, path: String, text: String },
    /// `/run COMMAND`: asks for approval, then "runs" the command.
    Run(String),
    /// `/ask QUESTION`: asks the user a question.
    Ask(String),
    /// `/slow MS`: delay between chunks for this turn.
    Slow(u64),
    /// `/chunks N`: stream N numbered chunks.
    Chunks(u64),
    /// `/reason TEXT`: reasoning before the reply.
    Reason(String),
    /// `/plan A; B; C`: a plan update.
    Plan(Vec<String>),
    /// `/fail [MESSAGE]`: the turn fails.
    Fail(String),
    /// `/history`: lists the earlier inputs of this session.
    History,
    /// `/goal OBJECTIVE`: the agent creates a goal by itself (as codex's `create_goal`).
    Goal(String),
    /// `/progress`: the agent reports progress on its goal (in this turn).
    Progress,
    /// `/spend TOKENS [COST]`: the turn spends TOKENS more output tokens (and COST more USD),
    /// reported at once.
    Spend { tokens: i64, cost: Option<f64> },
    /// `/hang`: nothing more happens until the turn is canceled.
    Hang,
    /// `/exit`: the agent "process" dies mid-turn.
    Exit,
    /// `/panic`: the agent's turn task panics.
    Panic,
    /// An unknown directive (reported in the reply).
    Unknown(String),
}

/// What a file directive does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileOp {
    /// Appends TEXT's lines (creating the file when it is missing).
    Edit,
    /// Creates or replaces the file with TEXT's lines.
    Write,
    /// Removes the file.
    Delete,
}

/// Parses a turn's input into directives, one per line.
pub fn parse(input: &str) -> Vec<Directive> {
    let mut out = Vec::new();
    for line in input.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let Some(rest) = line.strip_prefix('/') else {
            out.push(Directive::Say(line.to_owned()));
            continue;
        };
        let (cmd, arg) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let arg = arg.trim().to_owned();
        let d = match cmd {
            "tool" => {
                let (name, args) = arg.split_once(char::is_whitespace).unwrap_or((&arg, ""));
                Directive::Tool {
                    name: if name.is_empty() { "echo".into() } else { name.to_owned() },
                    args: args.trim().to_owned(),
                }
            }
            "edit" | "write" if !arg.is_empty() => {
                let (path, text) = arg.split_once(char::is_whitespace).unwrap_or((&arg, "hello"));
                let op = if cmd == "edit" { FileOp::Edit } else { FileOp::Write };
                Directive::File { op, path: path.to_owned(), text: text.trim().to_owned() }
            }
            "delete" if !arg.is_empty() => Directive::File { op: FileOp::Delete, path: arg, text: String::new() },
            "run" if !arg.is_empty() => Directive::Run(arg),
            "ask" if !arg.is_empty() => Directive::Ask(arg),
            "slow" => arg.parse().map(Directive::Slow).unwrap_or(Directive::Unknown(line.to_owned())),
            "chunks" => arg.parse().map(Directive::Chunks).unwrap_or(Directive::Unknown(line.to_owned())),
            "reason" => Directive::Reason(if arg.is_empty() { "Thinking it over.".into() } else { arg }),
            "plan" => Directive::Plan(arg.split(';').map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect()),
            "fail" => Directive::Fail(if arg.is_empty() { "scripted failure".into() } else { arg }),
            "history" => Directive::History,
            "goal" if !arg.is_empty() => Directive::Goal(arg),
            "progress" => Directive::Progress,
            "spend" => spend(&arg).unwrap_or(Directive::Unknown(line.to_owned())),
            "hang" => Directive::Hang,
            "exit" => Directive::Exit,
            "panic" => Directive::Panic,
            _ => Directive::Unknown(line.to_owned()),
        };
        out.push(d);
    }
    out
}

fn spend(arg: &str) -> Option<Directive> {
    let mut words = arg.split_whitespace();
    let tokens = words.next()?.parse().ok().filter(|t: &i64| *t >= 0)?;
    let cost = match words.next() {
        Some(c) => Some(c.parse().ok().filter(|c: &f64| c.is_finite() && *c >= 0.0)?),
        None => None,
    };
    words.next().is_none().then_some(Directive::Spend { tokens, cost })
}

/// The commands the scripted agent advertises (`commands.updated`).
pub fn commands() -> SharedList<CommandInfo> {
    // Constant: the store keeps its JSON once, not in every start's `commands.updated`.
    static COMMANDS: LazyLock<SharedList<CommandInfo>> = LazyLock::new(|| SharedList::new(list()));
    COMMANDS.clone()
}

fn list() -> Vec<CommandInfo> {
    let c = |name: &str, description: &str, hint: Option<&str>| CommandInfo {
        name: name.into(),
        description: description.into(),
        input_hint: hint.map(Into::into),
    };
    vec![
        c("tool", "simulate a tool call", Some("NAME [ARGS]")),
        c("edit", "append TEXT's lines to a file in the cwd (created when missing)", Some("PATH [TEXT]")),
        c("write", "create or replace a file in the cwd with TEXT", Some("PATH [TEXT]")),
        c("delete", "remove a file in the cwd", Some("PATH")),
        c("run", "ask for approval, then run a command (simulated)", Some("COMMAND")),
        c("ask", "ask the user a question", Some("QUESTION")),
        c("slow", "milliseconds between streamed chunks for this turn", Some("MS")),
        c("chunks", "stream N numbered chunks", Some("N")),
        c("reason", "stream reasoning before the reply", Some("TEXT")),
        c("plan", "publish a plan", Some("STEP; STEP; …")),
        c("fail", "make the turn fail", Some("MESSAGE")),
        c("history", "list this session's earlier inputs", None),
        c("spend", "spend TOKENS more tokens (and COST more USD) at once", Some("TOKENS [COST]")),
        c(
            "goal",
            "create a goal as the agent (steps=N: continuation turns, at most 20; noevidence: no turn-scoped updates; idle: none)",
            Some("OBJECTIVE"),
        ),
        c("progress", "report progress on the agent's goal", None),
        c("hang", "never finish (until canceled)", None),
        c("exit", "simulate the agent process dying mid-turn", None),
        c("panic", "simulate a crash of the agent's turn task", None),
    ]
}

/// `steps=N` in an objective: how many continuation turns it takes (default 1; `idle`: none).
pub(super) fn goal_steps(objective: &str) -> u64 {
    if objective.split_whitespace().any(|w| w == "idle") {
        return 0;
    }
    objective
        .split_whitespace()
        .find_map(|w| w.strip_prefix("steps=").and_then(|n| n.parse().ok()))
        .unwrap_or(1)
        .clamp(1, MAX_GOAL_STEPS)
}
