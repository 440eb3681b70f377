//! A control group per session: the memory and process limits of everything its agent runs.
//!
//! Two hierarchies are supported. **cgroup v2** (what systemd machines have): the server must be
//! given a subtree of its own (a systemd unit with `Delegate=yes`, or `systemd-run --user
//! --scope -p Delegate=yes`); at start it moves itself into a leaf `ensemble-server` of its
//! cgroup, turns the `memory` and `pids` controllers on for its cgroup's children, and makes one
//! child per session. **cgroup v1** (the `memory` and `pids` hierarchies mounted and writable, as
//! for root on older machines): a child of the server's own cgroup in each. Neither writable:
//! the limits are recorded but not enforced, and the session's isolation says so
//! (`limits: unenforced`); namespaces and the proxy confine the agent all the same.

use std::io;
use std::path::{Path, PathBuf};

use ensemble_core::isolation::LimitsEnforcement;

/// Where this server may make sessions' control groups, found at start.
#[derive(Clone, Debug)]
pub enum Cgroups {
    V2 {
        /// The server's delegated cgroup; sessions' groups are its children.
        base: PathBuf,
    },
    V1 {
        /// `…/memory/<the server's cgroup>/ensemble`.
        memory: PathBuf,
        /// `…/pids/<the server's cgroup>/ensemble`.
        pids: PathBuf,
    },
    /// No hierarchy the server may write; why.
    None(String),
}

/// One session's control group(s), removed (with whatever is still in them killed) when dropped.
#[derive(Debug)]
pub struct Cgroup {
    dirs: Vec<PathBuf>,
}

impl Cgroups {
    /// Finds a hierarchy this process may make children in, and prepares it (cgroup v2: moves
    /// this process into a leaf of its own cgroup and turns the controllers on for the others).
    pub fn detect() -> Cgroups {
        let (mountinfo, own) =
            match (std::fs::read_to_string("/proc/self/mountinfo"), std::fs::read_to_string("/proc/self/cgroup")) {
                (Ok(m), Ok(c)) => (m, c),
                _ => return Cgroups::None("/proc/self/mountinfo or /proc/self/cgroup cannot be read".into()),
            };
        let mounts = parse_mounts(&mountinfo);
        let groups = parse_own(&own);
        let mut why = Vec::new();
        match prepare_v2(&mounts, &groups) {
            Ok(c) => return c,
            Err(e) => why.push(format!("cgroup v2: {e}")),
        }
        match prepare_v1(&mounts, &groups) {
            Ok(c) => return c,
            Err(e) => why.push(format!("cgroup v1: {e}")),
        }
        Cgroups::None(why.join("; "))
    }

    pub fn enforcement(&self) -> LimitsEnforcement {
        match self {
            Cgroups::V2 { .. } => LimitsEnforcement::CgroupV2,
            Cgroups::V1 { .. } => LimitsEnforcement::CgroupV1,
            Cgroups::None(_) => LimitsEnforcement::Unenforced,
        }
    }

    /// A control group named `name` with the limits (none made when there is no hierarchy).
    pub fn create(&self, name: &str, memory_mb: Option<u64>, max_processes: Option<u64>) -> io::Result<Option<Cgroup>> {
        let memory = memory_mb.map(|mb| mb.saturating_mul(1 << 20).to_string());
        let pids = max_processes.map(|n| n.to_string());
        let group = match self {
            Cgroups::None(_) => return Ok(None),
            Cgroups::V2 { base } => {
                let dir = base.join(name);
                let group = Cgroup { dirs: vec![make(&dir)?] };
                if let Some(m) = &memory {
                    std::fs::write(dir.join("memory.max"), m)?;
                    // No swap to hide in: the limit is the memory.
                    let _ = std::fs::write(dir.join("memory.swap.max"), "0");
                }
                if let Some(p) = &pids {
                    std::fs::write(dir.join("pids.max"), p)?;
                }
                group
            }
            Cgroups::V1 { memory: mem_base, pids: pids_base } => {
                let (mem_dir, pids_dir) = (mem_base.join(name), pids_base.join(name));
                let group = Cgroup { dirs: vec![make(&mem_dir)?, make(&pids_dir)?] };
                if let Some(m) = &memory {
                    std::fs::write(mem_dir.join("memory.limit_in_bytes"), m)?;
                    // Where swap is accounted, the same limit for memory and swap together.
                    let _ = std::fs::write(mem_dir.join("memory.memsw.limit_in_bytes"), m);
                }
                if let Some(p) = &pids {
                    std::fs::write(pids_dir.join("pids.max"), p)?;
                }
                group
            }
        };
        Ok(Some(group))
    }
}

impl Cgroup {
    /// The files a process writes `0` into to join the group (between fork and exec).
    pub fn procs_files(&self) -> Vec<PathBuf> {
        self.dirs.iter().map(|d| d.join("cgroup.procs")).collect()
    }

    /// The processes in the group now.
    pub fn pids(&self) -> Vec<i32> {
        let Some(first) = self.dirs.first() else { return Vec::new() };
        std::fs::read_to_string(first.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// How many times its memory limit was reached and a process killed for it (cgroup v2's
    /// `oom_kill`, v1's `memory.oom_control`).
    pub fn oom_kills(&self) -> u64 {
        for dir in &self.dirs {
            for (file, key) in [("memory.events", "oom_kill "), ("memory.oom_control", "oom_kill ")] {
                if let Ok(text) = std::fs::read_to_string(dir.join(file))
                    && let Some(n) = text.lines().find_map(|l| l.strip_prefix(key)).and_then(|n| n.trim().parse().ok())
                {
                    return n;
                }
            }
        }
        0
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // What is left of the session (its agent is gone by now) goes with it; a group with
        // processes cannot be removed.
        for _ in 0..50 {
            let pids = self.pids();
            if pids.is_empty() {
                break;
            }
            for pid in pids {
                if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                }
            }
            std::thread::yield_now();
        }
        for dir in &self.dirs {
            if let Err(e) = std::fs::remove_dir(dir)
                && e.kind() != io::ErrorKind::NotFound
            {
                tracing::debug!(dir = %dir.display(), error = %e, "removing a session's control group");
            }
        }
    }
}

fn make(dir: &Path) -> io::Result<PathBuf> {
    match std::fs::create_dir(dir) {
        Ok(()) => Ok(dir.to_path_buf()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(dir.to_path_buf()),
        Err(e) => Err(e),
    }
}

/// Whether this process may make (and remove) a session's group in `base`: tried, since a
/// `base` that already exists (made by root, say) tells nothing of this user.
fn may_make_children(base: &Path) -> Result<(), String> {
    let probe = base.join(format!("probe-{}", std::process::id()));
    std::fs::create_dir(&probe)
        .and_then(|()| std::fs::remove_dir(&probe))
        .map_err(|e| format!("a group in {}: {e}", base.display()))
}

/// A cgroup mount: its file system type, super options and mount point.
#[derive(Debug, PartialEq)]
struct Mount {
    fstype: String,
    options: Vec<String>,
    point: PathBuf,
}

/// The cgroup mounts of a `/proc/self/mountinfo`.
fn parse_mounts(mountinfo: &str) -> Vec<Mount> {
    mountinfo
        .lines()
        .filter_map(|line| {
            // `id parent major:minor root point options [optional…] - fstype source super`
            let (left, right) = line.split_once(" - ")?;
            let point = left.split(' ').nth(4)?;
            let mut right = right.split(' ');
            let fstype = right.next()?.to_owned();
            let options = right.nth(1).unwrap_or("").split(',').map(str::to_owned).collect();
            matches!(fstype.as_str(), "cgroup" | "cgroup2").then(|| Mount { fstype, options, point: unescape(point) })
        })
        .collect()
}

/// mountinfo escapes spaces and the like as `\040`.
fn unescape(s: &str) -> PathBuf {
    let mut out = Vec::with_capacity(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && let Some(Ok(n)) = b.get(i + 1..i + 4).map(|d| u8::from_str_radix(&String::from_utf8_lossy(d), 8))
        {
            out.push(n);
            i += 4;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    PathBuf::from(String::from_utf8_lossy(&out).into_owned())
}

/// `controller → path` of a `/proc/self/cgroup` (`""` for the v2 line `0::/path`).
fn parse_own(cgroup: &str) -> Vec<(String, String)> {
    cgroup
        .lines()
        .filter_map(|l| {
            let mut parts = l.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            Some((controllers.to_owned(), path.to_owned()))
        })
        .collect()
}

fn prepare_v2(mounts: &[Mount], groups: &[(String, String)]) -> Result<Cgroups, String> {
    let mount = mounts.iter().find(|m| m.fstype == "cgroup2").ok_or("not mounted")?;
    let own = groups.iter().find(|(c, _)| c.is_empty()).map(|(_, p)| p).ok_or("this process is in none")?;
    let base = mount.point.join(own.trim_start_matches('/'));
    let controllers = std::fs::read_to_string(base.join("cgroup.controllers")).map_err(|e| e.to_string())?;
    for needed in ["memory", "pids"] {
        if !controllers.split_whitespace().any(|c| c == needed) {
            return Err(format!(
                "the `{needed}` controller is not delegated to {} (run the server in a unit with Delegate=yes)",
                base.display()
            ));
        }
    }
    let enabled = std::fs::read_to_string(base.join("cgroup.subtree_control")).unwrap_or_default();
    let on = |c: &str| enabled.split_whitespace().any(|e| e == c);
    if !(on("memory") && on("pids")) {
        // No process may stay in a group whose controllers are on for its children: this one
        // goes into a leaf of its own first.
        let leaf = base.join("ensemble-server");
        make(&leaf).map_err(|e| format!("{}: {e}", leaf.display()))?;
        std::fs::write(leaf.join("cgroup.procs"), "0").map_err(|e| format!("moving into {}: {e}", leaf.display()))?;
        std::fs::write(base.join("cgroup.subtree_control"), "+memory +pids")
            .map_err(|e| format!("enabling memory and pids in {}: {e}", base.display()))?;
    }
    may_make_children(&base)?;
    Ok(Cgroups::V2 { base })
}

fn prepare_v1(mounts: &[Mount], groups: &[(String, String)]) -> Result<Cgroups, String> {
    let dir = |controller: &str| -> Result<PathBuf, String> {
        let mount = mounts
            .iter()
            .find(|m| m.fstype == "cgroup" && m.options.iter().any(|o| o == controller))
            .ok_or_else(|| format!("no `{controller}` hierarchy is mounted"))?;
        let own = groups
            .iter()
            .find(|(c, _)| c.split(',').any(|c| c == controller))
            .map(|(_, p)| p.clone())
            .unwrap_or_else(|| "/".into());
        let base = mount.point.join(own.trim_start_matches('/')).join("ensemble");
        make(&base).map_err(|e| format!("{}: {e}", base.display()))?;
        may_make_children(&base)?;
        Ok(base)
    };
    Ok(Cgroups::V1 { memory: dir("memory")?, pids: dir("pids")? })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]
    use super::*;

    #[test]
    fn mounts_and_own_groups_are_read() {
        let info = "\
35 24 0:30 / /sys/fs/cgroup/memory rw,relatime shared:13 - cgroup cgroup rw,memory
36 24 0:31 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
37 24 0:32 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw,nsdelegate
38 24 0:33 / /mnt/with\\040space rw - ext4 /dev/x rw
";
        let mounts = parse_mounts(info);
        assert_eq!(mounts.len(), 3);
        assert_eq!(mounts[0].point, PathBuf::from("/sys/fs/cgroup/memory"));
        assert!(mounts[0].options.contains(&"memory".to_owned()));
        assert_eq!(mounts[2].fstype, "cgroup2");
        assert_eq!(unescape("/a\\040b"), PathBuf::from("/a b"));
        let own = parse_own("4:memory:/a/b\n8:pids:/\n0::/user.slice/x.scope\n");
        assert_eq!(own[0], ("memory".to_owned(), "/a/b".to_owned()));
        assert_eq!(own[2], (String::new(), "/user.slice/x.scope".to_owned()));
    }

    #[test]
    fn without_a_hierarchy_nothing_is_made_and_it_says_so() {
        let none = Cgroups::None("why".into());
        assert_eq!(none.enforcement(), LimitsEnforcement::Unenforced);
        assert!(none.create("s", Some(1), Some(1)).unwrap().is_none());
        assert!(prepare_v2(&[], &[]).is_err());
        assert!(prepare_v1(&[], &[]).unwrap_err().contains("no `memory` hierarchy"));
    }
}
