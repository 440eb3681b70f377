//! One PostgreSQL for a whole test run (`scripts/test`): starts it on a free loopback port, prints
//! its admin URL on the first line of stdout, and runs until its stdin closes (the script ends, or
//! dies), then stops the server and removes its files. Tests find it through
//! `ENSEMBLE_TEST_POSTGRES_URL` ([`ensemble_test_engines::TestDatabase`]).

use std::io::{Read, Write};

fn main() {
    let pg = match ensemble_test_engines::Postgres::start() {
        Ok(pg) => pg,
        Err(e) => {
            eprintln!("ensemble-test-postgres: {e:#}");
            std::process::exit(1);
        }
    };
    let mut out = std::io::stdout();
    if writeln!(out, "{}", pg.url()).and_then(|()| out.flush()).is_err() {
        std::process::exit(1);
    }
    // Whatever arrives on stdin is ignored; its end is the signal to stop.
    let mut sink = [0u8; 64];
    let mut stdin = std::io::stdin();
    while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
    drop(pg);
}
