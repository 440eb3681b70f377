//! Session state, kept in memory and, with `--state-dir`, persisted as one JSON file per session.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The modes every session offers: (id, name).
pub const MODES: [(&str, &str); 2] = [("default", "Default"), ("plan", "Plan")];
/// The values of the `model` config option: (value, name).
pub const MODELS: [(&str, &str); 2] = [("small", "Small"), ("large", "Large")];

/// One completed turn: the prompt's text and the reply the agent gave.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    pub prompt: String,
    pub reply: String,
}

/// What is remembered about a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionData {
    pub cwd: PathBuf,
    pub history: Vec<Turn>,
    pub mode: String,
    pub model: String,
}

impl SessionData {
    pub fn new(cwd: PathBuf) -> Self {
        Self { cwd, history: Vec::new(), mode: MODES[0].0.to_owned(), model: MODELS[0].0.to_owned() }
    }
}

/// Where sessions are persisted, if anywhere.
#[derive(Debug, Clone, Default)]
pub struct Store {
    dir: Option<PathBuf>,
}

impl Store {
    pub fn new(dir: Option<PathBuf>) -> Self {
        Self { dir }
    }

    /// The file of session `id`, if there is a state dir and `id` is a plain file name.
    fn path(&self, id: &str) -> Option<PathBuf> {
        let dir = self.dir.as_deref()?;
        let plain = !id.is_empty()
            && id != "."
            && id != ".."
            && id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        plain.then(|| dir.join(format!("{id}.json")))
    }

    /// Persist session `id` (a no-op without a state dir). Written to a temporary file and renamed, so
    /// a reader never sees half a file.
    pub fn save(&self, id: &str, data: &SessionData) -> std::io::Result<()> {
        let Some(path) = self.path(id) else { return Ok(()) };
        let json = serde_json::to_vec_pretty(data).map_err(std::io::Error::other)?;
        let tmp = path.with_extension(format!("json.tmp{}", std::process::id()));
        std::fs::write(&tmp, json)?;
        std::fs::rename(&tmp, &path)
    }

    /// The persisted session `id`, if there is one.
    /// Every persisted session (id and data), by id.
    pub fn all(&self) -> Vec<(String, SessionData)> {
        let Some(dir) = self.dir.as_deref() else { return Vec::new() };
        let mut out: Vec<(String, SessionData)> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_str()?.strip_suffix(".json")?.to_owned();
                Some((name, read(&e.path())?))
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    pub fn load(&self, id: &str) -> Option<SessionData> {
        let path = self.path(id)?;
        read(&path)
    }
}

fn read(path: &Path) -> Option<SessionData> {
    let bytes = std::fs::read(path).ok()?;
    match serde_json::from_slice(&bytes) {
        Ok(data) => Some(data),
        Err(error) => {
            eprintln!("ensemble-acp-test-agent: ignoring {}: {error}", path.display());
            None
        }
    }
}
