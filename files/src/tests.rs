#![allow(clippy::unwrap_used, reason = "tests fail loudly")]

use std::os::unix::fs::symlink;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::*;

struct Fixture {
    _dir: tempfile::TempDir,
    outside: PathBuf,
    work: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(work.join("sub")).unwrap();
    std::fs::write(work.join("a.txt"), "a\n").unwrap();
    std::fs::write(dir.path().join("secret"), "s").unwrap();
    Fixture { outside: dir.path().to_path_buf(), work, _dir: dir }
}

fn both() -> [Resolve; 2] {
    [Resolve::Openat2, Resolve::Walk]
}

fn root(f: &Fixture, resolve: Resolve) -> Root {
    Root::open_with(&f.work, Guard::default(), resolve).unwrap()
}

#[test]
fn files_inside_are_read_and_written() {
    for r in both() {
        let f = fixture();
        let root = root(&f, r);
        assert_eq!(root.read(&f.work.join("a.txt"), 100).unwrap(), b"a\n");
        assert_eq!(root.read(&f.work.join("sub/../a.txt"), 100).unwrap(), b"a\n");
        root.write(&f.work.join("sub/new.txt"), b"long content").unwrap();
        root.write(&f.work.join("sub/new.txt"), b"short").unwrap();
        assert_eq!(std::fs::read(f.work.join("sub/new.txt")).unwrap(), b"short", "{r:?}: replaced, not appended");
        assert!(matches!(root.read(&f.work.join("a.txt"), 1), Err(FileError::TooLarge(1))));
        assert!(matches!(root.read(&f.work.join("none"), 100), Err(FileError::NotFound)));
        assert!(matches!(root.read(Path::new("a.txt"), 100), Err(FileError::NotAbsolute)));
        assert!(matches!(root.read(&f.work, 100), Err(FileError::NoName)));
    }
}

#[test]
fn no_link_is_followed_and_nothing_escapes() {
    for r in both() {
        let f = fixture();
        symlink(f.outside.join("secret"), f.work.join("link")).unwrap();
        symlink(&f.outside, f.work.join("up")).unwrap();
        symlink(f.outside.join("created-through-link"), f.work.join("dangling")).unwrap();
        symlink("a.txt", f.work.join("inner-link")).unwrap();
        let root = root(&f, r);
        for bad in ["link", "up/secret", "inner-link", "dangling"] {
            let e = root.read(&f.work.join(bad), 100).unwrap_err();
            assert!(matches!(e, FileError::Symlink), "{r:?} {bad}: {e}");
        }
        for bad in ["../secret", "sub/../../secret"] {
            assert!(matches!(root.read(&f.work.join(bad), 100), Err(FileError::Outside)), "{r:?} {bad}");
        }
        assert!(matches!(root.read(&f.outside.join("secret"), 100), Err(FileError::Outside)));
        // The red team's write: through a dangling link to a file that does not exist yet.
        assert!(matches!(root.write(&f.work.join("dangling"), b"x"), Err(FileError::Symlink)), "{r:?}");
        assert!(matches!(root.write(&f.work.join("up/evil"), b"x"), Err(FileError::Symlink)), "{r:?}");
        assert!(!f.outside.join("created-through-link").exists(), "{r:?}");
        assert!(!f.outside.join("evil").exists(), "{r:?}");
        assert_eq!(std::fs::read(f.outside.join("secret")).unwrap(), b"s");
    }
}

#[test]
fn only_regular_files_and_a_fifo_never_blocks() {
    for r in both() {
        let f = fixture();
        let fifo = f.work.join("fifo");
        rustix::fs::mknodat(rustix::fs::CWD, &fifo, FileType::Fifo, Mode::from_raw_mode(0o600), 0).unwrap();
        let root = root(&f, r);
        // Without O_NONBLOCK each of these would wait for a peer for ever.
        assert!(matches!(root.read(&fifo, 100), Err(FileError::NotRegular("a FIFO"))), "{r:?}");
        assert!(matches!(root.write(&fifo, b"x"), Err(FileError::NotRegular(_))), "{r:?}");
        assert!(matches!(root.read(&f.work.join("sub"), 100), Err(FileError::NotRegular("a directory"))));
        assert!(matches!(root.read(&f.work.join("a.txt/x"), 100), Err(FileError::NotRegular(_))), "{r:?}");
    }
}

#[test]
fn hard_links_and_the_servers_files_are_refused() {
    for r in both() {
        let f = fixture();
        std::fs::hard_link(f.outside.join("secret"), f.work.join("tok")).unwrap();
        let root = root(&f, r);
        assert!(matches!(root.read(&f.work.join("tok"), 100), Err(FileError::HardLinked(2))), "{r:?}");
        assert!(matches!(root.write(&f.work.join("tok"), b""), Err(FileError::HardLinked(2))));
        assert_eq!(std::fs::read(f.outside.join("secret")).unwrap(), b"s", "not cut by the refused write");

        // The server's files by identity, and every entry of its data dir (here inside the cwd).
        std::fs::create_dir(f.work.join("data")).unwrap();
        std::fs::write(f.work.join("data/token"), "t").unwrap();
        std::fs::write(f.work.join("providers.toml"), "p").unwrap();
        let guard = Guard::new(&[f.work.join("providers.toml")], &[f.work.join("data")]);
        let root = Root::open_with(&f.work, guard, r).unwrap();
        assert!(matches!(root.read(&f.work.join("providers.toml"), 100), Err(FileError::Denied)));
        assert!(matches!(root.read(&f.work.join("data/token"), 100), Err(FileError::Denied)));
        assert!(matches!(root.write(&f.work.join("data/new"), b"x"), Err(FileError::Denied)));
        assert!(!f.work.join("data/new").exists(), "refused before anything was created");
        assert_eq!(root.read(&f.work.join("a.txt"), 100).unwrap(), b"a\n");
    }
}

#[test]
fn a_name_flipped_between_file_and_link_never_yields_the_target() {
    for r in both() {
        let f = fixture();
        let flip = f.work.join("sub/x");
        let stop = Arc::new(AtomicBool::new(false));
        let flipper = {
            let (stop, flip, secret) = (stop.clone(), flip.clone(), f.outside.join("secret"));
            std::thread::spawn(move || {
                let tmp = flip.with_extension("tmp");
                while !stop.load(Ordering::Relaxed) {
                    std::fs::write(&tmp, "plain").unwrap();
                    std::fs::rename(&tmp, &flip).unwrap();
                    let _ = std::fs::remove_file(&tmp);
                    symlink(&secret, &tmp).unwrap();
                    std::fs::rename(&tmp, &flip).unwrap();
                }
            })
        };
        let root = root(&f, r);
        for _ in 0..400 {
            match root.read(&flip, 100) {
                Ok(bytes) => assert_eq!(bytes, b"plain", "{r:?}: the link's target was read"),
                Err(FileError::Symlink | FileError::NotFound) => {}
                Err(e) => panic!("{r:?}: {e}"),
            }
        }
        stop.store(true, Ordering::Relaxed);
        flipper.join().unwrap();
    }
}

#[test]
fn remove_takes_a_file_or_a_link_never_its_target() {
    for r in both() {
        let f = fixture();
        let root = root(&f, r);
        root.remove(&f.work.join("a.txt")).unwrap();
        assert!(!f.work.join("a.txt").exists());
        // A link to a file outside goes; the file it names stays.
        symlink(f.outside.join("secret"), f.work.join("link")).unwrap();
        root.remove(&f.work.join("link")).unwrap();
        assert!(std::fs::symlink_metadata(f.work.join("link")).is_err());
        assert!(f.outside.join("secret").exists());
        assert!(matches!(root.remove(&f.work.join("sub")), Err(FileError::NotRegular(_))));
        assert!(matches!(root.remove(&f.outside.join("secret")), Err(FileError::Outside)));
        assert!(matches!(root.remove(&f.work.join("../secret")), Err(FileError::Outside)));
        assert!(matches!(root.remove(&f.work.join("gone")), Err(FileError::NotFound)));
        // Nothing beneath a link to a directory outside is reached.
        symlink(&f.outside, f.work.join("out")).unwrap();
        assert!(root.remove(&f.work.join("out/secret")).is_err());
        assert!(f.outside.join("secret").exists());
    }
}

#[test]
fn directories_are_made_beneath_the_root_and_never_through_a_link() {
    let f = fixture();
    let root = root(&f, Resolve::detect());
    root.create_dir_all(&f.work.join("x/y/z")).unwrap();
    assert!(f.work.join("x/y/z").is_dir());
    root.create_dir_all(&f.work.join("x/y")).unwrap();
    symlink(&f.outside, f.work.join("out")).unwrap();
    assert!(matches!(root.create_dir_all(&f.work.join("out/new")), Err(FileError::Symlink)));
    assert!(!f.outside.join("new").exists());
    assert!(matches!(root.create_dir_all(&f.work.join("a.txt/new")), Err(FileError::NotRegular(_))));
    assert!(matches!(root.create_dir_all(&f.work.join("../escape")), Err(FileError::Outside)));
}

#[test]
fn nothing_is_written_created_or_deleted_in_a_dot_git() {
    for r in both() {
        let f = fixture();
        std::fs::create_dir_all(f.work.join(".git/hooks")).unwrap();
        std::fs::write(f.work.join(".git/config"), "[core]\n").unwrap();
        std::fs::create_dir_all(f.work.join("sub/.GIT")).unwrap();
        let root = root(&f, r);
        for bad in [".git/config", ".git/hooks/pre-commit", "sub/.GIT/config", ".git", "sub/.git", "x/../.git/config"] {
            let e = root.write(&f.work.join(bad), b"[core]\n\tfsmonitor = evil\n").unwrap_err();
            assert!(matches!(e, FileError::GitDir), "{r:?} write {bad}: {e}");
            let e = root.remove(&f.work.join(bad)).unwrap_err();
            assert!(matches!(e, FileError::GitDir), "{r:?} remove {bad}: {e}");
        }
        let e = root.create_dir_all(&f.work.join("sub/.git/hooks")).unwrap_err();
        assert!(matches!(e, FileError::GitDir), "{r:?}: {e}");
        assert_eq!(std::fs::read_to_string(f.work.join(".git/config")).unwrap(), "[core]\n");
        assert!(!f.work.join("sub/.git").exists());
        // Reading is not writing; a name that only starts like it is a name.
        assert_eq!(root.read(&f.work.join(".git/config"), 100).unwrap(), b"[core]\n");
        root.write(&f.work.join(".gitignore"), b"x\n").unwrap();
        root.write(&f.work.join("sub/.github"), b"x\n").unwrap();
    }
}

#[test]
fn a_guarded_directory_is_out_of_reach_with_everything_beneath_it() {
    for r in both() {
        let f = fixture();
        let data = f.work.join("home/.local/share/ensemble");
        std::fs::create_dir_all(data.join("worktrees/other-room/src")).unwrap();
        std::fs::write(data.join("worktrees/other-room/src/lib.rs"), "theirs\n").unwrap();
        std::fs::write(data.join("token"), "secret").unwrap();
        let guard = Guard::new(&[], std::slice::from_ref(&data));
        let root = Root::open_with(&f.work, guard.clone(), r).unwrap();
        for bad in [
            "home/.local/share/ensemble/token",
            "home/.local/share/ensemble/worktrees/other-room/src/lib.rs",
            "home/.local/share/x/../ensemble/worktrees/other-room/src/lib.rs",
        ] {
            let e = root.read(&f.work.join(bad), 100).unwrap_err();
            assert!(matches!(e, FileError::Denied), "{r:?} read {bad}: {e}");
            let e = root.write(&f.work.join(bad), b"mine\n").unwrap_err();
            assert!(matches!(e, FileError::Denied), "{r:?} write {bad}: {e}");
        }
        let e = root.list(&data.join("worktrees")).unwrap_err();
        assert!(matches!(e, FileError::Denied), "{r:?}: {e}");
        // Not even listed.
        let names: Vec<_> = root.list(&f.work.join("home/.local/share")).unwrap().into_iter().map(|e| e.name).collect();
        assert!(names.is_empty(), "{names:?}");
        assert_eq!(std::fs::read_to_string(data.join("worktrees/other-room/src/lib.rs")).unwrap(), "theirs\n");
        // A root inside the guarded tree (a session's own worktree) works within itself.
        let own = Root::open_with(&data.join("worktrees/other-room"), guard.clone(), r).unwrap();
        assert_eq!(own.read(&data.join("worktrees/other-room/src/lib.rs"), 100).unwrap(), b"theirs\n");
        assert!(matches!(own.read(&data.join("token"), 100), Err(FileError::Outside)));
        // The guarded directory as the root: nothing.
        let at = Root::open_with(&data, guard.clone(), r).unwrap();
        assert!(matches!(at.read(&data.join("worktrees/other-room/src/lib.rs"), 100), Err(FileError::Denied)));
        assert!(guard.covers(&data.join("worktrees").canonicalize().unwrap()));
        assert!(!guard.covers(&f.work.canonicalize().unwrap()));
    }
}
