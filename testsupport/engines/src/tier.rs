//! Tests in tiers: a plain `cargo nextest run` on a fresh checkout, with none of the external
//! programs installed (codex, the ACP agents, PostgreSQL, nats-server, bubblewrap), passes; a test
//! that needs one returns early with a line naming what is missing and how to get it. Where
//! [`REQUIRE_ALL`] is set — `scripts/test` sets it, after installing everything — a missing program
//! fails the test instead: there nothing may be skipped.

use crate::{Nats, Postgres};

/// Set (to anything but `0`) by `scripts/test`: every external program a test needs must be there.
pub const REQUIRE_ALL: &str = "ENSEMBLE_TEST_REQUIRE_ALL";

/// Whether `scripts/test` demands every external program ([`REQUIRE_ALL`]).
pub fn required() -> bool {
    std::env::var_os(REQUIRE_ALL).is_some_and(|v| v != "0")
}

/// Whether a test that needs `what` runs: `true` when it is `present`; else, unless
/// [`REQUIRE_ALL`] demands it (then it panics), `false` after saying so on stderr.
pub fn runs_with(what: &str, present: bool, how: &str) -> bool {
    if present {
        return true;
    }
    assert!(!required(), "{what} is missing ({how}), and {REQUIRE_ALL} says every test must run");
    eprintln!("skipped: {what} is missing ({how})");
    false
}

/// PostgreSQL's `initdb` and `postgres`.
pub fn postgres() -> bool {
    runs_with("PostgreSQL", Postgres::available(), "Debian: apt-get install postgresql")
}

/// `nats-server`.
pub fn nats() -> bool {
    runs_with("nats-server", Nats::available(), "Debian: apt-get install nats-server")
}

/// `program` on `PATH` (or the Debian places off a non-root `PATH`).
pub fn on_path(program: &str) -> bool {
    let dirs = std::env::var("PATH").unwrap_or_default();
    dirs.split(':')
        .chain(["/usr/sbin", "/sbin"])
        .any(|d| !d.is_empty() && std::path::Path::new(d).join(program).is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_present_program_runs_and_a_missing_one_is_skipped_unless_required() {
        assert!(runs_with("x", true, "y"));
        // The variable is read here, never set: this test holds in either tier.
        if std::env::var_os(REQUIRE_ALL).is_none() {
            assert!(!runs_with("x", false, "y"));
        } else {
            assert!(std::panic::catch_unwind(|| runs_with("x", false, "y")).is_err());
        }
        assert!(on_path("sh"));
        assert!(!on_path("no-such-program-here"));
    }
}
