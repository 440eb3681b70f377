//! `checkpoint` against `git stash create` on the same tree: a repository of 10,000 committed
//! files, 10 of them changed before each round, the two measured in alternating order.
//! Run with `cargo bench -p ensemble-workspace --bench checkpoint` (scripts/bench does); prints the
//! median ratio and its target line. `-- --small`: 100 files and 3 rounds, the smoke run of
//! scripts/test (nothing judged there).

use std::error::Error;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use ensemble_workspace::Git;

const CHANGED: usize = 10;
/// The checkpoint may take at most this many times `git stash create`'s time.
const TARGET: f64 = 1.5;

fn git(dir: &Path, args: &[&str]) -> Result<String, Box<dyn Error>> {
    let out =
        Command::new("git").args(["-c", "user.name=b", "-c", "user.email=b@b"]).args(args).current_dir(dir).output()?;
    if !out.status.success() {
        return Err(format!("git {args:?}: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(String::from_utf8(out.stdout)?)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() -> Result<(), Box<dyn Error>> {
    let small = std::env::args().any(|a| a == "--small");
    let (dirs, files_per_dir, rounds) = if small { (10, 10, 3) } else { (100, 100, 15) };
    let tmp = tempfile::tempdir()?;
    let top = tmp.path().join("repo");
    for d in 0..dirs {
        let dir = top.join(format!("d{d:03}"));
        std::fs::create_dir_all(&dir)?;
        for f in 0..files_per_dir {
            std::fs::write(dir.join(format!("f{f:03}.txt")), format!("file {d} {f}\n").repeat(8))?;
        }
    }
    git(&top, &["init", "-q", "-b", "main"])?;
    git(&top, &["add", "-A"])?;
    git(&top, &["commit", "-q", "-m", "init"])?;
    let index = tmp.path().join("ensemble.index");
    let g = Git::default();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let repo = rt.block_on(g.discover(&top))?.ok_or("not a repository")?;
    let shadow = rt.block_on(g.shadow(&repo.common_dir, &repo.object_format, &tmp.path().join("shadow.git")))?;
    let checkpoint = |round: usize| -> Result<Duration, Box<dyn Error>> {
        let started = Instant::now();
        let refname = format!("refs/ensemble/bench/{round:04}");
        rt.block_on(g.checkpoint(&repo, &shadow, &index, &refname, "bench", 1 << 20))?;
        Ok(started.elapsed())
    };
    let stash = || -> Result<Duration, Box<dyn Error>> {
        let started = Instant::now();
        let sha = git(&top, &["stash", "create"])?;
        let elapsed = started.elapsed();
        if sha.trim().is_empty() {
            return Err("stash create made nothing".into());
        }
        Ok(elapsed)
    };
    // Warm both: the first checkpoint seeds the private index (and hashes every file, writing the
    // blobs git finds missing into the server's own repository), and
    // stash create refreshes the user's index.
    std::fs::write(top.join("d000/f000.txt"), "warm\n")?;
    let seed = checkpoint(0)?;
    stash()?;
    println!("first checkpoint (seeding the private index): {:.1} ms", ms(seed));

    let (mut ratios, mut ours, mut theirs) = (Vec::new(), Vec::new(), Vec::new());
    for round in 1..=rounds {
        for i in 0..CHANGED {
            let path = top.join(format!("d{:03}/f{:03}.txt", (i * dirs / CHANGED) % dirs, (round + i) % files_per_dir));
            std::fs::write(path, format!("round {round} changed {i}\n"))?;
        }
        let (cp, st) = if round % 2 == 0 {
            let cp = checkpoint(round)?;
            (cp, stash()?)
        } else {
            let st = stash()?;
            (checkpoint(round)?, st)
        };
        ratios.push(cp.as_secs_f64() / st.as_secs_f64());
        ours.push(ms(cp));
        theirs.push(ms(st));
        println!("round {round:2}: checkpoint {:7.1} ms   stash create {:7.1} ms", ms(cp), ms(st));
    }
    let ratio = median(ratios);
    println!(
        "median: checkpoint {:.1} ms, stash create {:.1} ms, ratio {ratio:.2}x (median of per-round ratios)",
        median(ours),
        median(theirs),
    );
    println!(
        "target: turn-end checkpoint <= {TARGET}x git stash create ({} files, {CHANGED} changed): {} ({ratio:.2}x)",
        dirs * files_per_dir,
        if ratio <= TARGET { "MET" } else { "MISSED" }
    );
    Ok(())
}
