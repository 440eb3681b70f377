//! Finding an agent's binary and checking its version before any session needs it.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::availability::Availability;
use super::process::base_env;

/// A version as `major.minor.patch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
}

impl Version {
    pub const fn new(major: u64, minor: u64, patch: u64) -> Self {
        Self { major, minor, patch }
    }

    /// The first word of `text` that starts with a digit, as a version (`codex-cli 0.169.0` →
    /// 0.169.0, `tool 1.2` → 1.2.0).
    pub fn parse(text: &str) -> Option<Self> {
        let word = text.split_whitespace().find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))?;
        let mut it = word.split(|c: char| !c.is_ascii_digit()).filter(|p| !p.is_empty()).map(|p| p.parse::<u64>());
        Some(Self::new(it.next()?.ok()?, it.next()?.ok()?, it.next().and_then(Result::ok).unwrap_or(0)))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Finds an executable on `PATH`; a name with a `/` is taken as a path.
pub fn which(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        return Some(PathBuf::from(name));
    }
    // A relative entry (`.`, or the empty one) would name a file of whatever directory the agent
    // runs in: skipped.
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths).filter(|d| d.is_absolute()).map(|d| d.join(name)).find(|p| p.is_file())
    })
}

/// An agent binary to check with `<bin> --version`.
#[derive(Clone, Debug)]
pub struct BinaryCheck<'a> {
    /// The agent's name in messages (`codex`).
    pub name: &'a str,
    pub bin: &'a Path,
    /// The option that sets the binary (`--codex-bin`), for the operator.
    pub setting: &'a str,
    /// The oldest version the provider speaks to.
    pub min_version: Version,
    /// How long `--version` may take.
    pub timeout: Duration,
}

/// Runs `<bin> --version` with the explicit base environment (killed after the timeout) and says
/// whether the binary can be used.
pub async fn probe(check: &BinaryCheck<'_>) -> Availability {
    let BinaryCheck { name, bin, setting, min_version, timeout } = check;
    let out = tokio::time::timeout(
        *timeout,
        tokio::process::Command::new(bin).arg("--version").env_clear().envs(base_env()).kill_on_drop(true).output(),
    )
    .await;
    match out {
        Err(_) => Availability::unavailable(format!("`{} --version` did not answer", bin.display())),
        Ok(Err(e)) if e.kind() == io::ErrorKind::NotFound => {
            Availability::unavailable(format!("the {name} binary was not found at {} (set {setting})", bin.display()))
        }
        Ok(Err(e)) => Availability::unavailable(format!("`{} --version` failed: {e}", bin.display())),
        Ok(Ok(o)) => {
            let text = String::from_utf8_lossy(&o.stdout).into_owned();
            match Version::parse(&text) {
                Some(v) if v >= *min_version => Availability::Available { version: v.to_string() },
                Some(v) => Availability::unavailable(format!("{name} {v} is older than the supported {min_version}")),
                None => Availability::unavailable(format!("unrecognised `{name} --version` output: {}", text.trim())),
            }
        }
    }
}

/// Why the binary could not be started, for the operator.
pub fn spawn_failure(name: &str, bin: &Path, e: &io::Error) -> String {
    if e.kind() == io::ErrorKind::NotFound {
        format!("the {name} binary was not found at {}", bin.display())
    } else {
        format!("{name} could not be started: {e}")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]

    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn versions_parse() {
        assert_eq!(Version::parse("codex-cli 0.169.0\n"), Some(Version::new(0, 169, 0)));
        assert_eq!(Version::parse("codex 1.2"), Some(Version::new(1, 2, 0)));
        assert_eq!(Version::parse("tool v2 3.4.5-beta"), Some(Version::new(3, 4, 5)));
        assert_eq!(Version::parse("garbage"), None);
        assert!(Version::parse("codex-cli 0.170.1").unwrap() >= Version::new(0, 169, 0));
        assert!(Version::parse("codex-cli 0.99.0").unwrap() < Version::new(0, 169, 0));
        assert_eq!(Version::new(0, 169, 0).to_string(), "0.169.0");
    }

    #[test]
    fn which_takes_paths_as_they_are_and_searches_path_for_names() {
        assert_eq!(which("/opt/x/tool"), Some(PathBuf::from("/opt/x/tool")));
        assert_eq!(which("./tool"), Some(PathBuf::from("./tool")));
        assert!(which("sh").is_some_and(|p| p.is_absolute() && p.ends_with("sh")));
        assert_eq!(which("no-such-binary-anywhere-ensemble"), None);
    }

    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    async fn check(bin: &Path, timeout: Duration) -> Availability {
        let check =
            BinaryCheck { name: "agent", bin, setting: "--agent-bin", min_version: Version::new(1, 2, 0), timeout };
        probe(&check).await
    }

    fn reason(a: Availability) -> String {
        match a {
            Availability::Unavailable { reason, retry: false, .. } => reason,
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn probing_reads_the_version_and_explains_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let t = Duration::from_secs(10);
        let ok = script(dir.path(), "ok", "echo 'agent-cli 1.3.0'");
        assert_eq!(check(&ok, t).await, Availability::Available { version: "1.3.0".into() });
        let old = script(dir.path(), "old", "echo 'agent-cli 1.1.9'");
        assert_eq!(reason(check(&old, t).await), "agent 1.1.9 is older than the supported 1.2.0");
        let odd = script(dir.path(), "odd", "echo 'no version here'");
        assert_eq!(reason(check(&odd, t).await), "unrecognised `agent --version` output: no version here");
        let missing = dir.path().join("missing");
        assert_eq!(
            reason(check(&missing, t).await),
            format!("the agent binary was not found at {} (set --agent-bin)", missing.display())
        );
        let slow = script(dir.path(), "slow", "exec sleep 5");
        assert!(reason(check(&slow, Duration::from_millis(100)).await).ends_with("--version` did not answer"));
    }

    #[test]
    fn spawn_failures_name_the_binary() {
        let bin = Path::new("/x/agent");
        let missing = io::Error::from(io::ErrorKind::NotFound);
        assert_eq!(spawn_failure("agent", bin, &missing), "the agent binary was not found at /x/agent");
        let denied = io::Error::from(io::ErrorKind::PermissionDenied);
        assert!(spawn_failure("agent", bin, &denied).starts_with("agent could not be started: "));
    }
}
