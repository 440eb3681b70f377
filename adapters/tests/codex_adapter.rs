//! The codex adapter on its own (no server), against the real binary: rules that REST cannot reach.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use ensemble_adapters::codex::{CodexAdapter, CodexConfig};
use ensemble_core::adapter::MemoryState;
use ensemble_core::adapter::{Adapter, EventSink, Fact, FactReceiver, ProviderState, SessionHandle};
use ensemble_core::model::{Session, SessionKey, SubmitAvailability};
use ensemble_mock_model::{CodexProvider, MockConfig, MockModel};

fn codex_bin() -> PathBuf {
    std::env::var_os("ENSEMBLE_CODEX_BIN").map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../.tools/codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex")
    })
}

#[derive(Default)]
struct Collect(Mutex<Vec<Fact>>);

#[async_trait]
impl FactReceiver for Collect {
    async fn receive(&self, _key: &SessionKey, _generation: u64, facts: Vec<Fact>) {
        self.0.lock().unwrap().extend(facts);
    }
}

fn session(cwd: &Path) -> Session {
    Session {
        title: "t".into(),
        submit_availability: SubmitAvailability::available(),
        ..Session::new_canonical("r", "s", "codex", &cwd.to_string_lossy(), 0)
    }
}

fn app_servers(home: &Path) -> Vec<i32> {
    let needle = format!("CODEX_HOME={}", home.display());
    let me = std::process::id() as i32;
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter(|pid| {
            let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
            let alive = fields.first().is_some_and(|s| *s != "Z");
            let ppid = fields.get(1).and_then(|p| p.parse::<i32>().ok());
            alive && ppid == Some(me) && env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes())
        })
        .collect()
}

async fn gone(pid: i32) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z")) {
        assert!(tokio::time::Instant::now() < deadline, "process {pid} still alive");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn starting_over_a_live_session_replaces_its_process() {
    if !ensemble_test_engines::tier::runs_with(
        "codex",
        codex_bin().exists(),
        "scripts/test installs it into .tools/codex; or set ENSEMBLE_CODEX_BIN",
    ) {
        return;
    }
    let mock = MockModel::start(MockConfig::default()).await.unwrap();
    let home = tempfile::Builder::new().prefix("ensemble-codex-adapter-").tempdir_in("/var/tmp").unwrap();
    let work = tempfile::Builder::new().prefix("ensemble-codex-work-").tempdir_in("/var/tmp").unwrap();
    let mut config = CodexConfig::new(codex_bin(), home.path());
    config.overrides = CodexProvider::default().overrides(&mock.base_url());
    // codex runs `bash -l`; a HOME of its own keeps the machine's dotfiles (and their locks) out.
    config.env.push(("HOME".into(), home.path().to_string_lossy().into_owned()));
    let adapter = CodexAdapter::new(config);
    adapter.probe().await;
    assert!(adapter.descriptor().available, "{:?}", adapter.descriptor());
    let s = session(work.path());
    let sink = Arc::new(Collect::default());
    let handle = |g| SessionHandle {
        sink: EventSink::new(sink.clone(), s.key(), g),
        state: ProviderState::new(Arc::new(MemoryState::default()), s.key()),
        goals: Arc::new(ensemble_core::goal::NoGoalHost),
        goal: Default::default(),
    };
    let first = adapter.start(&s, handle(1)).await.unwrap();
    let first_pids = app_servers(home.path());
    assert_eq!(first_pids.len(), 1);
    let second = adapter.start(&s, handle(2)).await.unwrap();
    assert_ne!(first.patch.provider_session_id, second.patch.provider_session_id, "a new thread");
    gone(first_pids[0]).await;
    let now = app_servers(home.path());
    assert_eq!(now.len(), 1, "exactly one live process for the session: {now:?}");
    assert_ne!(now[0], first_pids[0]);
    assert!(adapter.is_live(&s));
    assert_eq!(adapter.live_processes(), 1);
    adapter.close(&s).await.unwrap();
    gone(now[0]).await;
    assert!(!adapter.is_live(&s));
    // The replaced process's end was not reported as a loss of the session.
    assert!(!sink.0.lock().unwrap().iter().any(|f| matches!(f, Fact::Lost { .. })));
}
