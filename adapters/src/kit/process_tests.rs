//! Tests of `process`.

use super::*;

fn sh(script: &str, dir: &std::path::Path) -> ProcessSpec {
    ProcessSpec {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), script.into()],
        env: base_env(),
        cwd: dir.to_path_buf(),
        cgroup_procs: Vec::new(),
    }
}

async fn pids_from(file: &std::path::Path, n: usize) -> Vec<i32> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(text) = std::fs::read_to_string(file) {
            let pids: Vec<i32> = text.split_whitespace().filter_map(|p| p.parse().ok()).collect();
            if pids.len() >= n {
                return pids;
            }
        }
        assert!(tokio::time::Instant::now() < deadline, "pids never written");
        tokio::task::yield_now().await;
    }
}

async fn all_gone(pids: &[i32]) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while pids.iter().any(|&p| alive(p)) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "still alive: {:?}",
            pids.iter().filter(|&&p| alive(p)).collect::<Vec<_>>()
        );
        tokio::task::yield_now().await;
    }
}

#[test]
fn parses_stat_with_odd_names() {
    assert_eq!(stat_fields("42 (a) b (c)) S 7 42 42 0"), Some(('S', 7, 42)));
}

#[tokio::test]
async fn terminate_reaches_descendants_across_setsid() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pids");
    let script = format!(
        "sleep 300 & echo $! >> {p}; setsid sleep 300 & echo $! >> {p}; trap '' TERM; while :; do sleep 1; done",
        p = pidfile.display()
    );
    let mut spawned = Supervised::spawn(&sh(&script, dir.path())).unwrap();
    let mut pids = pids_from(&pidfile, 2).await;
    pids.push(spawned.process.pid());
    // The leader ignores SIGTERM: terminate must escalate to SIGKILL after the grace.
    let status = spawned.process.terminate(Duration::from_millis(200)).await;
    assert!(status.is_some());
    all_gone(&pids).await;
}

#[tokio::test]
async fn dropping_the_handle_kills_the_group() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pids");
    let script = format!("sleep 300 & echo $! >> {p}; echo $$ >> {p}; wait", p = pidfile.display());
    let spawned = Supervised::spawn(&sh(&script, dir.path())).unwrap();
    let pids = pids_from(&pidfile, 2).await;
    drop(spawned);
    all_gone(&pids).await;
}

#[tokio::test]
async fn the_environment_is_explicit() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("env");
    let mut spec = sh(&format!("env > {}", out.display()), dir.path());
    spec.env = vec![("ONLY".into(), "this".into())];
    let mut spawned = Supervised::spawn(&spec).unwrap();
    spawned.process.wait().await.unwrap();
    let env = std::fs::read_to_string(&out).unwrap();
    assert!(env.contains("ONLY=this"));
    assert!(!env.contains("HOME="), "nothing inherited: {env}");
}

#[tokio::test]
async fn what_left_the_tree_in_the_background_goes_with_it() {
    // An agent's tool runs a command in a session of its own that leaves a process running in the
    // background and exits: that process is reparented away (to init, or a subreaper), out of
    // reach of the group and of the descendants, but it carries the tag.
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pids");
    let script = format!("setsid sh -c 'sleep 300 & echo $! >> {p}'; exec sleep 300", p = pidfile.display());
    let spawned = Supervised::spawn(&sh(&script, dir.path())).unwrap();
    let leader = spawned.process.pid();
    let orphan = pids_from(&pidfile, 1).await[0];
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while descendants(leader).contains(&orphan) {
        assert!(tokio::time::Instant::now() < deadline, "the background command never left the tree");
        tokio::task::yield_now().await;
    }
    assert!(spawned.process.tagged().contains(&orphan));
    let family = spawned.process.family();
    spawned.process.shut_down(&family, Duration::from_millis(100), Duration::from_millis(200)).await;
    all_gone(&[leader, orphan]).await;
}
