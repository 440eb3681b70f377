use super::*;

#[test]
fn settings_reject_unknown_values() {
    let ok: SessionSettings = serde_json::from_str(r#"{"approvalPolicy":"on-request","sandbox":"read-only"}"#).unwrap();
    assert_eq!(ok.approval_policy, Some(ApprovalPolicy::OnRequest));
    assert!(serde_json::from_str::<SessionSettings>(r#"{"approvalPolicy":"sometimes"}"#).is_err());
    assert!(serde_json::from_str::<SessionSettings>(r#"{"bogus":1}"#).is_err());
}

/// Every member set, strings that need escaping.
fn full_session() -> Session {
    let text = |s: &str| format!("{s} \"quoted\" \\ é\n\u{1}\u{2028}");
    Session {
        room_id: text("room"),
        session_id: text("session"),
        root_session_id: text("root"),
        provider: text("provider"),
        provider_session_id: Some(text("thread")),
        scope: Scope::Side,
        source_session_id: Some(text("source")),
        side_request_id: Some(text("request")),
        status: SessionStatus::Waiting,
        active_turn_id: Some(text("turn")),
        submit_availability: SubmitAvailability::blocked(&text("why")),
        resumable: false,
        resume_unsupported_reason: Some(text("no load")),
        live: true,
        visible: false,
        title: text("title"),
        last_error: Some(text("error")),
        auth_state: Some(AuthState::AuthRequired),
        auth_message: Some(text("log in")),
        cwd: text("/w"),
        workspace: Some(Box::new(SessionWorkspace {
            kind: WorkspaceKind::Worktree,
            repo: Some(text("/r")),
            base_commit: Some(text("abc")),
            branch: Some(text("ensemble/r/s")),
            path: Some(text("/w")),
            git_dir: Some(text("/r/.git/worktrees/w")),
            common_dir: Some(text("/r/.git")),
            checkpoints: true,
        })),
        isolation: Some(Box::new(crate::isolation::Isolation {
            mode: crate::isolation::IsolationMode::On,
            network: crate::isolation::NetworkAccess::Endpoints(vec![text("api.example.com:443")]),
            home: vec![text("~/.agent")],
            memory_mb: Some(2048),
            max_processes: Some(256),
            limits: crate::isolation::LimitsEnforcement::CgroupV1,
        })),
        forked_from: Some(Box::new(ForkedFrom { session_id: text("a"), turn_id: text("t"), checkpoint: text("c") })),
        settings: serde_json::from_str(
            r#"{"model":"m\"1","reasoningEffort":"high","approvalPolicy":"never","sandbox":"read-only"}"#,
        )
        .unwrap(),
        modes: Some(SessionModes {
            current: text("mode"),
            available: SharedList::new(vec![ModeInfo { id: text("m"), ..Default::default() }]),
        }),
        config_options: SharedList::new(vec![ConfigOption {
            id: text("o"),
            name: text("n"),
            description: Some(text("d")),
            category: None,
            current: text("c"),
            choices: SharedList::default(),
        }]),
        created_at_ms: i64::MIN,
        updated_at_ms: i64::MAX,
    }
}

#[test]
fn a_session_reads_back_as_it_was_written() {
    let mut bare = Session::new_canonical("r", "s", "scripted", "/w", 7);
    bare.modes = Some(SessionModes { current: "default".into(), available: SharedList::default() });
    for session in [full_session(), Session::new_canonical("r", "s", "scripted", "/w", 7), bare] {
        let json = serde_json::to_string(&session).unwrap();
        assert_eq!(serde_json::from_str::<Session>(&json).unwrap(), session, "{json}");
    }
    // Every optional member of the full session is there.
    let full = serde_json::to_value(full_session()).unwrap();
    assert_eq!(full.as_object().unwrap().len(), 28, "{full}");
}

#[test]
fn a_session_table_is_made_ready_for_its_limit_up_to_a_cap() {
    assert!(session_table::<()>(100).capacity() >= 100);
    // Any number is a valid --max-sessions: a huge one must not allocate a huge table (nor
    // overflow the capacity and abort the server at start).
    let huge = session_table::<()>(usize::MAX);
    assert!(huge.capacity() >= SESSION_TABLE_PRESIZE_MAX, "{}", huge.capacity());
    assert!(huge.capacity() < 2 * SESSION_TABLE_PRESIZE_MAX, "{}", huge.capacity());
}

#[test]
fn the_login_command_is_the_first_quoted_command() {
    let logged_out = "codex is not logged in: run `CODEX_HOME=/d/codex codex login`, or point it at a provider";
    assert_eq!(login_command(logged_out).as_deref(), Some("CODEX_HOME=/d/codex codex login"));
    // A message that quotes no command names none.
    assert_eq!(login_command("codex's model provider \"mock\" reads its API key from KEY"), None);
    assert_eq!(login_command("empty `` quotes"), None);
}
