//! The `ensemble` binary.

use std::process::ExitCode;

use ensemble_adapters::kit::process::{self, ChildDefaults};
use ensemble_server::config::{Cli, Command};
use ensemble_server::{openapi, os, router, runs, server, telemetry, token_cli};

// glibc's malloc (its arenas, `malloc_consolidate`) dominated a profile of session starts;
// mimalloc's thread-local free lists cut that (docs/performance/log.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse_args();
    let args = match cli.command {
        Some(Command::SandboxInit(init)) => return sandbox_init(&init),
        Some(Command::Openapi) => {
            print!("{}", openapi::pretty(&router::openapi()));
            return ExitCode::SUCCESS;
        }
        Some(Command::Url(local)) => return print_local(runs::running(&local.data_dir()).map(|r| r.url)),
        Some(Command::Token(t)) => match &t.action {
            None => return print_local(runs::token(&t.local.data_dir())),
            Some(action) => {
                let done = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(anyhow::Error::from)
                    .and_then(|rt| rt.block_on(token_cli::run(&t.local, action)));
                return print_local(done);
            }
        },
        Some(Command::Serve(args)) => *args,
        None => cli.serve,
    };
    // Before any thread or file exists: everything the server creates is private to its user, and
    // it may hold as many descriptors as the hard limit allows. Agents get back what the user had.
    let user_umask = os::set_umask(os::PRIVATE_UMASK);
    let raised = os::raise_file_limit();
    process::set_child_defaults(ChildDefaults {
        umask: user_umask,
        nofile_soft: raised.as_ref().ok().filter(|r| r.after != r.before).map(|r| r.before.soft),
    });
    telemetry::init_tracing(args.log_format, args.log_color);
    match raised {
        Ok(r) => tracing::debug!(
            soft = r.after.soft,
            hard = r.after.hard,
            soft_before = r.before.soft,
            hard_before = r.before.hard,
            "open-file limit{}",
            if r.after == r.before { "" } else { " (soft raised to the hard limit)" }
        ),
        Err(e) => tracing::warn!(error = %e, "could not raise the open-file limit"),
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().thread_name("ensemble").build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("ensemble: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(server::serve(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ensemble: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Inside an agent's box: the forwards, then the agent; exits as the agent does.
fn sandbox_init(init: &ensemble_server::config::SandboxInitArgs) -> ExitCode {
    let forwards: Result<Vec<_>, String> =
        init.forward.iter().map(|f| ensemble_isolation::init::Forward::parse(f)).collect();
    let (program, args) = match init.command.split_first() {
        Some((p, a)) => (p, a),
        None => return ExitCode::from(2),
    };
    match forwards.map_err(std::io::Error::other).and_then(|f| ensemble_isolation::init::run(&f, program, args)) {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(e) => {
            eprintln!("ensemble sandbox-init: {e}");
            ExitCode::from(127)
        }
    }
}

/// What `ensemble url` and `ensemble token` print: the value alone on stdout (for `$(…)`), or why
/// not on stderr.
fn print_local(value: anyhow::Result<String>) -> ExitCode {
    match value {
        Ok(v) => {
            println!("{v}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("ensemble: {e:#}");
            ExitCode::FAILURE
        }
    }
}
