use clap::CommandFactory;

use super::*;

#[test]
fn help_is_grouped_with_the_essentials_first() {
    let help = Cli::command().find_subcommand_mut("serve").unwrap().render_long_help().to_string();
    let at = |needle: &str| help.find(needle).unwrap_or_else(|| panic!("{needle} not in the help"));
    let headings =
        ["Essentials:", "Security:", "Providers:", "Limits:", "Storage:", "Workspaces:", "Several hosts:", "Tuning:"]
            .map(at);
    assert!(headings.windows(2).all(|w| w[0] < w[1]), "headings out of order: {headings:?}");
    for essential in ["--listen", "--data-dir", "--default-provider", "--providers", "--codex-bin"] {
        let i = at(&format!("      {essential} "));
        assert!(headings[0] < i && i < headings[1], "{essential} is not among the essentials");
    }
    assert!(at("--commit-linger-ms") > headings[7], "a tuning knob outside Tuning");
}

#[test]
fn defaults_match_the_contract() {
    let a = Cli::try_parse_from(["ensemble"]).unwrap().serve;
    assert_eq!(a.listen.to_string(), "127.0.0.1:7878");
    assert_eq!(a.max_body_bytes, 8 * 1024 * 1024);
    assert_eq!(a.log_format, LogFormat::Text);
    assert_eq!(a.default_provider, "scripted");
    assert_eq!(a.providers.shared.goal_grace_ms, 250);
    assert_eq!(a.header_read_timeout_secs, 10);
    assert_eq!(a.keep_alive_idle_secs, 5);
    assert_eq!(a.max_connections, 1024);
    assert!(!a.allow_shared_token_file);
    // One token may hold a fraction of what the server takes in all, so the others get in.
    assert_eq!((a.max_long_polls_per_token, a.max_ws_per_token), (16, 32));
    assert!(a.max_long_polls_per_token as usize <= a.max_connections / 32);
    assert!(a.ws().max_per_token * 4 <= a.max_ws_per_room && a.ws().max_per_token * 32 <= a.max_ws_connections);
    assert_eq!((a.audit_refusals_per_min, a.audit_refusal_burst, a.refusal_log_interval_secs), (60, 60, 10));
    for zero in
        ["--max-long-polls-per-token", "--max-ws-per-token", "--audit-refusal-burst", "--refusal-log-interval-secs"]
    {
        assert!(Cli::try_parse_from(["ensemble", zero, "0"]).is_err(), "{zero} 0");
    }
}

#[test]
fn the_byte_budgets_reach_what_they_bound() {
    let d = Cli::try_parse_from(["ensemble"]).unwrap().serve;
    let mib16 = 16 << 20;
    assert_eq!(
        (d.store_queue_bytes, d.providers.shared.rpc_queue_bytes, d.side_log_bytes, d.ws_queue_bytes),
        (mib16, mib16, mib16, mib16)
    );
    assert_eq!(d.start_buffer_bytes, mib16);
    // The default follows the data dir's file system: 256 KiB unless it copies on write.
    let dir = tempfile::tempdir().unwrap();
    let cow = crate::os::is_copy_on_write(crate::os::file_system_type(dir.path()).unwrap());
    assert_eq!(crate::server::default_wal_prefill(dir.path()), if cow { 0 } else { 256 << 10 });
    assert_eq!(crate::server::store_config(&d).wal_prefill, crate::server::default_wal_prefill(&d.data_dir()));
    let a = Cli::try_parse_from([
        "ensemble",
        "--sqlite-wal-prefill-bytes",
        "1000",
        "--store-queue-bytes",
        "1000",
        "--rpc-queue-bytes",
        "2000",
        "--side-log-bytes",
        "3000",
        "--start-buffer-bytes",
        "4000",
        "--max-queued-bytes",
        "5000",
        "--queue-preview-bytes",
        "60",
        "--events-page-bytes",
        "7000",
    ])
    .unwrap()
    .serve;
    assert_eq!(crate::server::store_config(&a).queue_bytes, 1000);
    assert_eq!(crate::server::store_config(&a).wal_prefill, 1000);
    assert_eq!(
        a.providers
            .shared
            .env("/d".into(), 32, Vec::new(), Vec::new(), ensemble_adapters::kit::sandbox::IsolationEnv::off())
            .rpc_queue_bytes,
        2000
    );
    assert_eq!(crate::server::controller_config(&a).side_log_bytes, 3000);
    assert_eq!(crate::server::controller_config(&a).start_buffer_bytes, 4000);
    let c = crate::server::controller_config(&a);
    assert_eq!((c.max_queued_bytes, c.queue_preview_bytes), (5000, 60));
    let c = crate::server::controller_config(&d);
    assert_eq!((c.max_queued_bytes, c.queue_preview_bytes), (4 << 20, 256));
    assert_eq!(crate::server::store_config(&a).page_bytes, 7000);
    // Below what every event type's fixed fields take, the event limit is raised to it.
    let small = Cli::try_parse_from(["ensemble", "--max-event-bytes", "100"]).unwrap().serve;
    assert_eq!(crate::server::controller_config(&small).max_event_bytes, ensemble_core::event::MIN_EVENT_BYTES);
    assert_eq!(crate::server::store_config(&d).page_bytes, 4 << 20);
}

#[test]
fn the_shared_token_file_switch_is_a_flag() {
    let a = Cli::try_parse_from(["ensemble", "--allow-shared-token-file"]).unwrap().serve;
    assert!(a.allow_shared_token_file);
    // Its environment variable takes the usual spellings (`true`, `1`, `yes`; tested against
    // the binary, as tests cannot set this process's environment safely).
    Cli::command().debug_assert();
}

#[test]
fn serve_is_the_default_subcommand() {
    let named = Cli::try_parse_from(["ensemble", "--listen", "localhost:7879"]).unwrap();
    assert!(named.serve.listen.ip().is_loopback() && named.serve.listen.port() == 7879, "{:?}", named.serve.listen);
    for bad in ["localhost", "localhost:http", ":80", "127.0.0.1:99999"] {
        let e = Cli::try_parse_from(["ensemble", "--listen", bad]).unwrap_err().to_string();
        assert!(e.contains("HOST:PORT"), "{bad}: {e}");
    }
    let cli = Cli::try_parse_from(["ensemble", "--listen", "127.0.0.1:0"]).unwrap();
    assert!(cli.command.is_none());
    assert_eq!(cli.serve.listen.port(), 0);
    let cli = Cli::try_parse_from(["ensemble", "serve", "--listen", "127.0.0.1:0"]).unwrap();
    assert!(matches!(cli.command, Some(Command::Serve(_))));
    assert!(Cli::try_parse_from(["ensemble", "openapi"]).is_ok());
    assert!(Cli::try_parse_from(["ensemble", "--log-format", "xml"]).is_err());
}
