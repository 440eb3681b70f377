//! The `ensemble` binary.

use std::process::ExitCode;

use clap::Parser;
use ensemble_server::config::{Cli, Command};
use ensemble_server::{openapi, router, server, telemetry};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let args = match cli.command {
        Some(Command::Openapi) => {
            print!("{}", openapi::pretty(&router::openapi()));
            return ExitCode::SUCCESS;
        }
        Some(Command::Serve(args)) => *args,
        None => cli.serve,
    };
    telemetry::init_tracing(args.log_format);
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
