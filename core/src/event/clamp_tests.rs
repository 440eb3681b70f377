//! The clamp over every event type: each made as large as a client or an agent could make it (every
//! free string long, every list and map long) is at most the limit afterwards, and still an event of
//! its type that reads back as itself.

use std::collections::HashSet;

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::event::*;
use crate::model::*;
use crate::shared_list::SharedList;
use crate::usage::*;

fn s(tag: &str) -> String {
    format!("{tag}-sample")
}

fn session() -> Session {
    let mut s0 = Session::new_canonical("room-1", "session-1", "scripted", "/work/dir", 1);
    s0.provider_session_id = Some(s("provider-session"));
    s0.source_session_id = Some(s("source"));
    s0.side_request_id = Some(s("side-request"));
    s0.active_turn_id = Some(s("turn"));
    s0.resume_unsupported_reason = Some(s("why"));
    s0.last_error = Some(s("error"));
    s0.auth_state = Some(AuthState::AuthRequired);
    s0.auth_message = Some(s("run `login`"));
    s0.workspace = Some(Box::new(SessionWorkspace {
        kind: WorkspaceKind::Worktree,
        repo: Some(s("repo")),
        base_commit: Some(s("base")),
        branch: Some(s("branch")),
        path: Some(s("path")),
        git_dir: Some(s("git dir")),
        common_dir: Some(s("common dir")),
        checkpoints: true,
    }));
    s0.isolation = Some(Box::new(crate::isolation::Isolation {
        mode: crate::isolation::IsolationMode::On,
        network: crate::isolation::NetworkAccess::Endpoints(vec![s("api.example.com:443")]),
        home: vec![s("~/.agent")],
        memory_mb: Some(1),
        max_processes: Some(1),
        limits: crate::isolation::LimitsEnforcement::Unenforced,
    }));
    s0.forked_from =
        Some(Box::new(ForkedFrom { session_id: s("from"), turn_id: s("turn"), checkpoint: s("checkpoint") }));
    s0.settings = SessionSettings {
        model: Some(s("model")),
        reasoning_effort: Some(s("effort")),
        approval_policy: Some(ApprovalPolicy::OnRequest),
        sandbox: Some(SandboxMode::WorkspaceWrite),
        collaboration_mode: Some(CollaborationMode::Plan),
        queue_after_failure: Some(true),
    };
    s0.modes = Some(SessionModes {
        current: s("mode"),
        available: SharedList::new(vec![ModeInfo { id: s("id"), name: s("name"), description: Some(s("d")) }]),
    });
    s0.config_options = SharedList::new(vec![ConfigOption {
        id: s("option"),
        name: s("name"),
        description: Some(s("d")),
        category: Some(s("category")),
        current: s("value"),
        choices: SharedList::new(vec![ConfigChoice { value: s("value"), name: s("name"), description: Some(s("d")) }]),
    }]);
    s0
}

fn input() -> Vec<InputItem> {
    vec![
        InputItem::Text { text: s("text") },
        InputItem::Image {
            data: Some(s("data")),
            mime_type: Some("image/png".into()),
            path: Some(s("path")),
            name: Some(s("name")),
            attachment: Some(s("attachment")),
            bytes: Some(3),
        },
        InputItem::File { path: s("file"), bytes: Some(4), mime_type: Some("text/plain".into()) },
    ]
}

fn error() -> ErrorInfo {
    ErrorInfo::new("code", s("message"))
}

fn changes() -> Vec<FileChange> {
    vec![FileChange { path: s("path"), kind: "update".into(), diff: Some(s("diff")) }]
}

fn goal() -> Goal {
    Goal {
        objective: s("objective"),
        status: GoalStatus::Active,
        token_budget: Some(10),
        tokens_used: Some(1),
        operation_id: s("operation"),
        revision: 1,
        repair_epoch: 0,
        origin: GoalOrigin::User,
        updated_at_ms: 1,
    }
}

/// One event of every type, every optional field set and every list holding an element.
fn samples() -> Vec<EventBody> {
    let turn = || s("turn");
    vec![
        EventBody::SessionStarted(SessionStartedPayload { session: session().into(), ephemeral: true }),
        EventBody::SessionUpdated(SessionUpdatedPayload { session: session(), reason: s("reason") }),
        EventBody::SessionCompleted(SessionCompletedPayload { session: session(), reason: s("reason") }),
        EventBody::SessionFailed(SessionFailedPayload { session: session(), error: error() }),
        EventBody::TurnStarted(TurnStartedPayload {
            turn_id: turn(),
            origin: TurnOrigin::GoalContinuation,
            goal_operation_id: Some(s("operation")),
            goal_revision: Some(1),
            goal_repair_epoch: Some(2),
            input: input(),
            client_submit_id: Some(s("submit")),
        }),
        EventBody::TurnCompleted(TurnCompletedPayload { turn_id: turn() }),
        EventBody::TurnFailed(TurnFailedPayload { turn_id: turn(), error: error() }),
        EventBody::TurnCanceled(TurnCanceledPayload { turn_id: turn(), reason: s("reason") }),
        EventBody::TurnSteered(TurnSteeredPayload { turn_id: turn(), input: input(), client_submit_id: Some(s("c")) }),
        EventBody::MessageDelta(TextDeltaPayload { item_id: s("item"), text: s("text") }),
        EventBody::MessageCompleted(TextCompletedPayload { item_id: s("item"), text: s("text") }),
        EventBody::ReasoningDelta(TextDeltaPayload { item_id: s("item"), text: s("text") }),
        EventBody::ReasoningCompleted(TextCompletedPayload { item_id: s("item"), text: s("text") }),
        EventBody::CallStarted(CallStartedPayload {
            call_id: s("call"),
            kind: CallKind::Command,
            name: s("name"),
            command: Some(s("command")),
            cwd: Some(s("cwd")),
            input: Some(json!({"args": [s("arg")], "flag": s("value"), "nested": {"k": s("v")}})),
            changes: changes(),
        }),
        EventBody::CallUpdated(CallUpdatedPayload {
            call_id: s("call"),
            output_delta: Some(s("output")),
            status: Some(s("status")),
        }),
        EventBody::CallCompleted(CallCompletedPayload {
            call_id: s("call"),
            status: CallStatus::Failed,
            output: Some(s("output")),
            exit_code: Some(1),
            changes: changes(),
        }),
        EventBody::InteractionRequested(InteractionRequestedPayload {
            request_id: s("request"),
            kind: InteractionKind::UserInput,
            title: s("title"),
            detail: Some(s("detail")),
            command: Some(s("command")),
            cwd: Some(s("cwd")),
            diff: Some(s("diff")),
            questions: vec![Question {
                id: s("q"),
                header: Some(s("header")),
                question: s("question"),
                options: vec![QuestionOption { label: s("label"), description: Some(s("d")) }],
                is_other: true,
                is_secret: false,
            }],
            options: vec![Decision::Accept, Decision::Decline],
            call_id: Some(s("call")),
            agent_options: vec![AgentOption {
                option_id: s("option"),
                name: s("name"),
                kind: AgentOptionKind::AllowOnce,
                decision: Decision::Accept,
            }],
        }),
        EventBody::InteractionResolved(InteractionResolvedPayload {
            request_id: s("request"),
            decision: Decision::Accept,
            resolved_by: ResolvedBy::Client,
            answers: Some(json!({"q": {"answers": [s("answer")]}})),
        }),
        EventBody::UsageUpdated(UsagePayload {
            input_tokens: 1,
            output_tokens: 2,
            cached_input_tokens: 3,
            reasoning_output_tokens: 4,
            total_tokens: 5,
            last_turn_total_tokens: Some(6),
            context_window: Some(7),
            cost: Some(Cost { amount: 0.5, currency: s("currency") }),
        }),
        EventBody::CommandsUpdated(CommandsUpdatedPayload {
            commands: SharedList::new(vec![CommandInfo {
                name: s("name"),
                description: s("description"),
                input_hint: Some(s("hint")),
            }]),
        }),
        EventBody::PlanUpdated(PlanUpdatedPayload {
            explanation: Some(s("explanation")),
            steps: vec![PlanStep { step: s("step"), status: "pending".into() }],
        }),
        EventBody::GoalUpdated(GoalUpdatedPayload { goal: goal() }),
        EventBody::GoalCleared(GoalClearedPayload { operation_id: s("operation"), revision: 1, repair_epoch: 2 }),
        EventBody::GoalReconcileRequired(GoalReconcileRequiredPayload {
            reason: s("reason"),
            provider_turn_id: Some(turn()),
            operation_id: Some(s("operation")),
        }),
        EventBody::Notice(NoticePayload { level: NoticeLevel::Info, message: s("message") }),
        EventBody::TurnChanges(TurnChangesPayload {
            turn_id: turn(),
            before: s("before"),
            after: s("after"),
            files: vec![ChangedFile {
                path: s("path"),
                old_path: Some(s("old")),
                status: ChangeStatus::Renamed,
                added: 1,
                removed: 2,
                binary: false,
            }],
            skipped: vec![s("skipped")],
        }),
        EventBody::WorkspaceRestored(WorkspaceRestoredPayload {
            checkpoint: s("checkpoint"),
            undo: s("undo"),
            kept: vec![s("kept")],
        }),
        EventBody::WorkspaceCommitted(WorkspaceCommittedPayload {
            commit: s("commit"),
            branch: s("branch"),
            message: s("message"),
        }),
        EventBody::QueueUpdated(QueueUpdatedPayload::of(
            &[QueuedTurn { turn_id: turn(), input: input(), client_submit_id: Some(s("c")), queued_at_ms: 1 }],
            "queued",
            256,
        )),
        EventBody::SessionNeedsAttention(SessionNeedsAttentionPayload {
            request_id: s("request"),
            kind: InteractionKind::CommandApproval,
            title: s("title"),
            requested_at_ms: 1,
        }),
        EventBody::BudgetExhausted(BudgetExhaustedPayload {
            scope: "session".into(),
            budget: Budget { max_tokens: Some(1), max_cost: Some(1.0), on_exhausted: Some(OnExhausted::Cancel) },
            state: BudgetState { exhausted: true, tokens: 2, cost: Some(1.5) },
        }),
        EventBody::NetworkBlocked(crate::event::NetworkBlockedPayload { host: s("host.example"), port: 443 }),
    ]
}

#[test]
fn the_samples_are_one_of_every_event_type() {
    let names: Vec<&str> = samples().iter().map(EventBody::type_name).collect();
    assert_eq!(names, EventBody::TYPE_NAMES, "a new event type needs a sample here");
}

/// A step into the sample an inflated value was made from (a list's elements are copies of its
/// sample's elements, so they share its steps).
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
enum Step {
    Index(usize),
    Key(String),
}

/// Where in a sample a value can grow and the event still reads as its type: strings that are free
/// text (not an enum's or a number's), and objects that take members they do not know (maps, and
/// structs that ignore unknown members).
#[derive(Default)]
struct Growable {
    strings: HashSet<Vec<Step>>,
    objects: HashSet<Vec<Step>>,
}

fn at<'a>(v: &'a mut Value, path: &[Step]) -> &'a mut Value {
    path.iter().fold(v, |v, step| match (v, step) {
        (Value::Array(a), Step::Index(i)) => &mut a[*i],
        (Value::Object(o), Step::Key(k)) => o.get_mut(k).expect("a sample's member"),
        _ => unreachable!("a path of the sample"),
    })
}

fn reads_as(v: Value, type_name: &str) -> bool {
    serde_json::from_value::<EventBody>(v).is_ok_and(|b| b.type_name() == type_name)
}

fn growable(sample: &Value, type_name: &str) -> Growable {
    let mut out = Growable::default();
    let mut paths = Vec::new();
    fn walk(v: &Value, path: &mut Vec<Step>, out: &mut Vec<(Vec<Step>, bool)>) {
        match v {
            Value::String(_) => out.push((path.clone(), true)),
            Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| {
                path.push(Step::Index(i));
                walk(x, path, out);
                path.pop();
            }),
            Value::Object(o) => {
                out.push((path.clone(), false));
                for (k, x) in o {
                    path.push(Step::Key(k.clone()));
                    walk(x, path, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    walk(sample, &mut Vec::new(), &mut paths);
    for (path, is_string) in paths {
        // The envelope's `type` stays what it is.
        if path.first() != Some(&Step::Key("payload".into())) {
            continue;
        }
        let mut v = sample.clone();
        if is_string {
            *at(&mut v, &path) = Value::String("x".repeat(300) + "é\"\n\u{1}");
            if reads_as(v, type_name) {
                out.strings.insert(path);
            }
        } else {
            if let Value::Object(o) = at(&mut v, &path) {
                o.insert("zzExtra".into(), json!("x"));
            }
            if reads_as(v, type_name) {
                out.objects.insert(path);
            }
        }
    }
    out
}

/// splitmix64: the choices of one inflation, from the case's seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// What strings are made of: plain, multi-byte, escaped by JSON (so a string's JSON is up to six
/// times its bytes).
const PIECES: [&str; 6] = ["a", "é", "\"", "\n", "\u{1}", "😀"];

/// A sample made large: free strings up to `2 × max` bytes, lists up to a hundred times as long,
/// maps with extra members; `budget` bytes in all at most, so a case stays quick.
struct Inflate<'a> {
    rng: Rng,
    growable: &'a Growable,
    max: usize,
    budget: usize,
}

impl Inflate<'_> {
    fn string(&mut self) -> String {
        let piece = PIECES[self.rng.below(PIECES.len() as u64) as usize];
        let len = (self.rng.below(2 * self.max as u64) as usize).min(self.budget);
        self.budget -= len;
        piece.repeat(len / piece.len() + 1)
    }

    fn value(&mut self, v: &Value, path: &mut Vec<Step>) -> Value {
        match v {
            Value::String(_) if self.growable.strings.contains(path) && self.rng.below(4) > 0 => {
                Value::String(self.string())
            }
            Value::Array(a) if !a.is_empty() => {
                let copies = 1 + self.rng.below(100) as usize;
                let mut out = Vec::new();
                for _ in 0..copies {
                    for (i, x) in a.iter().enumerate() {
                        path.push(Step::Index(i));
                        out.push(self.value(x, path));
                        path.pop();
                    }
                    if self.budget == 0 {
                        break;
                    }
                    self.budget = self.budget.saturating_sub(16);
                }
                Value::Array(out)
            }
            Value::Object(o) => {
                let mut out = serde_json::Map::new();
                for (k, x) in o {
                    path.push(Step::Key(k.clone()));
                    out.insert(k.clone(), self.value(x, path));
                    path.pop();
                }
                if self.growable.objects.contains(path) {
                    for i in 0..self.rng.below(200) {
                        if self.budget == 0 {
                            break;
                        }
                        let member = match self.rng.below(3) {
                            0 => Value::String(self.string()),
                            1 => json!([i, "x", {"k": i}]),
                            _ => json!(i),
                        };
                        let key = if self.rng.below(8) == 0 { self.string() } else { format!("extra{i}") };
                        out.insert(key, member);
                        self.budget = self.budget.saturating_sub(16);
                    }
                }
                Value::Object(out)
            }
            other => other.clone(),
        }
    }
}

/// Checks what the clamp keeps of `body` under `max`.
fn holds(body: EventBody, max: usize) -> Result<(), TestCaseError> {
    let type_name = body.type_name();
    let size = body_size(&body);
    let (kept, cut, charged) = clamp_body_sized(body.clone(), max);
    let kept_size = body_size(&kept);
    prop_assert!(kept_size <= max, "a `{type_name}` of {size} bytes kept {kept_size} > {max}");
    prop_assert_eq!(kept.type_name(), type_name, "it is still a `{}` ({:?})", type_name, kept);
    let json = serde_json::to_string(&kept).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let back: EventBody = serde_json::from_str(&json).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&back, &kept, "it reads back as itself");
    if size <= max {
        prop_assert_eq!(cut, None);
        prop_assert_eq!(&kept, &body, "an event within the limit is left as it is");
    } else {
        prop_assert_eq!(cut, Some(size));
        prop_assert_eq!(charged, kept_size, "what the store is charged is what is left");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    /// Every event type (the case picks one), grown anywhere it can grow, fits the limit after the
    /// clamp and stays itself.
    #[test]
    fn every_event_fits_the_limit_and_keeps_its_type(
        which in 0..EventBody::TYPE_NAMES.len(),
        max in MIN_EVENT_BYTES..32_768,
        seed in any::<u64>(),
    ) {
        let sample = samples().swap_remove(which);
        let type_name = sample.type_name();
        let template = serde_json::to_value(&sample).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let growable = growable(&template, type_name);
        let mut inflate = Inflate { rng: Rng(seed), growable: &growable, max, budget: 8 * max };
        let grown = inflate.value(&template, &mut Vec::new());
        let body: EventBody = serde_json::from_value(grown).map_err(|e| TestCaseError::fail(format!("{type_name}: {e}")))?;
        holds(body, max)?;
    }
}

/// Every type at its largest: every free string longer than the limit (twice as long in JSON),
/// every list ten times its sample's length (a list in a list twice).
#[test]
fn every_event_type_at_its_largest_fits() {
    // The smallest limit the server takes: the hardest to fit.
    let max = MIN_EVENT_BYTES;
    for sample in samples() {
        let type_name = sample.type_name();
        let mut template = serde_json::to_value(&sample).unwrap();
        let growable = growable(&template, type_name);
        for path in &growable.strings {
            *at(&mut template, path) = Value::String("é\"".repeat(max / 2));
        }
        fn lists(v: &mut Value, copies: usize) {
            match v {
                Value::Array(a) => {
                    a.iter_mut().for_each(|x| lists(x, 2));
                    let one = a.clone();
                    for _ in 1..copies {
                        a.extend(one.iter().cloned());
                    }
                }
                Value::Object(o) => o.values_mut().for_each(|x| lists(x, copies)),
                _ => {}
            }
        }
        lists(&mut template, 10);
        let body: EventBody = serde_json::from_value(template).unwrap();
        assert!(body_size(&body) > max, "{type_name} grew");
        if let Err(e) = holds(body, max) {
            panic!("{type_name} under {max}: {e}");
        }
    }
}

#[test]
fn a_long_list_keeps_its_first_elements_whole() {
    let files = (0..10_000).map(|i| format!("src/some/long/enough/path/of/file/number/{i:05}.rs")).collect::<Vec<_>>();
    let body = EventBody::WorkspaceRestored(WorkspaceRestoredPayload {
        checkpoint: "c".into(),
        undo: "u".into(),
        kept: files.clone(),
    });
    let (kept, cut, _) = clamp_body_sized(body, 16 << 10);
    assert!(cut.is_some());
    let EventBody::WorkspaceRestored(p) = kept else { panic!("still a workspace.restored") };
    assert!(p.kept.len() > 100, "{} paths kept", p.kept.len());
    assert_eq!(p.kept[..], files[..p.kept.len()], "the first ones, whole");
}

#[test]
fn a_few_long_strings_are_cut_and_the_list_kept() {
    let steps = (0..4).map(|i| PlanStep { step: format!("{i}{}", "x".repeat(100_000)), status: "pending".into() });
    let body = EventBody::PlanUpdated(PlanUpdatedPayload { explanation: None, steps: steps.collect() });
    let (kept, _, _) = clamp_body_sized(body, 16 << 10);
    let EventBody::PlanUpdated(p) = kept else { panic!("still a plan") };
    assert_eq!(p.steps.len(), 4, "every step stays");
    for (i, step) in p.steps.iter().enumerate() {
        assert!(step.step.starts_with(&i.to_string()) && step.step.ends_with(TRUNCATED_MARK), "{}", step.step.len());
        assert_eq!(step.status, "pending");
    }
}
