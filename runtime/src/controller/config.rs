//! The controller's named, configurable limits and timeouts.

use std::time::Duration;

/// Named, configurable limits and timeouts of the controller.
#[derive(Clone, Debug)]
pub struct ControllerConfig {
    /// Longest a lifecycle operation waits for the session's lock.
    pub lock_timeout: Duration,
    /// How long close waits for a canceled turn to end before forcing it.
    pub close_grace: Duration,
    /// The cwd of sessions started without one.
    pub default_cwd: String,
    /// Largest accepted turn input, in bytes of text.
    pub max_input_bytes: usize,
    /// Events a side conversation keeps in memory for replay (older ones are dropped).
    pub side_log_events: usize,
    /// Bytes of events a side conversation keeps in memory for replay (older ones are dropped; the
    /// newest is always kept): with events up to `max_event_bytes` the count alone could hold GiBs.
    pub side_log_bytes: usize,
    /// Bytes of events an agent may send while its session starts, resumes or opens (held until
    /// the session is announced); later ones are dropped, with a warning notice.
    pub start_buffer_bytes: usize,
    /// Sessions (not closed) in total, sides included; more are refused (`too_many_sessions`).
    pub max_sessions: usize,
    /// Sessions (not closed) per room.
    pub max_sessions_per_room: usize,
    /// Live canonical sessions (each holds a provider process or task); starting or resuming more
    /// is refused with `at_capacity` (503, retry later).
    pub max_live_sessions: usize,
    /// Largest serialised event an adapter may publish; larger ones are cut (see
    /// [`ensemble_core::event::clamp_body`]).
    pub max_event_bytes: usize,
    /// Live sessions idle this long are released (None: never).
    pub idle_release: Option<Duration>,
    /// The provider of sessions started without one.
    pub default_provider: String,
    /// Several hosts share the database: this host's identity (None: the only host).
    pub cluster: Option<ClusterConfig>,
    /// After a failed commit, how often the store is tried again (and the sessions that lost
    /// events repaired once it writes).
    pub store_retry: Duration,
    /// Worktrees and checkpoints; `None`: neither (git is not used).
    pub workspaces: Option<WorkspaceConfig>,
    /// Why there are no workspaces (git did not run), for the errors of routes that need them.
    pub workspaces_off_reason: Option<String>,
    /// Images and files in turns.
    pub attachments: AttachmentConfig,
    /// Most follow-ups one session's queue holds.
    pub max_queued_turns: usize,
    /// Most bytes of input one session's queue holds (its turns' inputs as JSON, images by their
    /// attachment): the queue is in the session's record, written again at every change.
    pub max_queued_bytes: usize,
    /// How much of a queued turn's text `queue.updated` shows (the rest is in `GET …/queue`).
    pub queue_preview_bytes: usize,
    /// The budget of a session that has none of its own.
    pub default_session_budget: Option<ensemble_core::usage::Budget>,
    /// The budget of a room that has none of its own.
    pub default_room_budget: Option<ensemble_core::usage::Budget>,
    /// An interaction unanswered this long is said to need attention (`session.needs_attention`,
    /// once); `None`: never.
    pub attention_after: Option<Duration>,
}

/// Where a turn's images are kept and how large a turn's images and files may be.
#[derive(Clone, Debug)]
pub struct AttachmentConfig {
    /// Where images are kept, a directory per session (`None`: images are refused).
    pub dir: Option<std::path::PathBuf>,
    /// The server's own files, never read as a turn's file (see `ensemble_files::Guard`).
    pub guard: ensemble_files::Guard,
    /// Largest image (decoded bytes).
    pub max_image_bytes: u64,
    /// Most bytes of images and embedded files one turn's input carries.
    pub max_turn_bytes: u64,
    /// A file of a turn is given to the agent with its content up to this size; larger ones
    /// only as a link to the file.
    pub max_embedded_file_bytes: u64,
}

impl Default for AttachmentConfig {
    fn default() -> Self {
        Self {
            dir: None,
            guard: ensemble_files::Guard::default(),
            max_image_bytes: 5 << 20,
            max_turn_bytes: 16 << 20,
            max_embedded_file_bytes: 256 << 10,
        }
    }
}

/// This host's part in a group of hosts sharing one PostgreSQL database.
#[derive(Clone, Debug)]
pub struct ClusterConfig {
    /// This host's name in leases and session ownership (unique among the hosts).
    pub host_id: String,
}

/// Where and how sessions' workspaces are made and checkpointed (`None` in
/// [`ControllerConfig::workspaces`]: no worktrees, no checkpoints).
#[derive(Clone, Debug)]
pub struct WorkspaceConfig {
    pub git: ensemble_workspace::Git,
    /// Where worktree sessions' worktrees are made.
    pub worktrees_dir: std::path::PathBuf,
    /// The server's checkpoint data: the private index files, one per session, and a bare
    /// repository per user repository holding its checkpoints (`repos/<hash>.git`).
    pub index_dir: std::path::PathBuf,
    /// Where a session's work tree and its repository's git dirs must be (canonical): the
    /// workspace roots. A dir session whose enclosing work tree reaches outside gets no
    /// checkpoints; a worktree's repository outside is refused.
    pub roots: Vec<std::path::PathBuf>,
    /// The server's own directories (canonical: the data dir, the worktrees, the checkpoints, a
    /// provider's home), where no session may work or find its repository: a session there
    /// would reach other rooms' worktrees and the server's secrets.
    pub private: Vec<std::path::PathBuf>,
    /// Files larger than this are left out of checkpoints (and named in `turn.changes`).
    pub max_file_bytes: u64,
    /// The longest unified diff `…/changes` answers with (cut beyond, and flagged).
    pub max_diff_bytes: usize,
    /// A closed session's worktree is removed this long after the close (its branch kept unless
    /// merged); `None`: kept until purged.
    pub worktree_retention: Option<std::time::Duration>,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        Self {
            lock_timeout: Duration::from_secs(10),
            close_grace: Duration::from_secs(3),
            default_cwd: "/".into(),
            max_input_bytes: 1024 * 1024,
            side_log_events: 10_000,
            side_log_bytes: 16 << 20,
            start_buffer_bytes: 16 << 20,
            max_sessions: 4096,
            max_sessions_per_room: 256,
            max_live_sessions: 32,
            max_event_bytes: 1024 * 1024,
            idle_release: None,
            default_provider: "scripted".into(),
            cluster: None,
            store_retry: Duration::from_secs(1),
            workspaces: None,
            workspaces_off_reason: None,
            attachments: AttachmentConfig::default(),
            max_queued_turns: 32,
            max_queued_bytes: 4 << 20,
            queue_preview_bytes: 256,
            default_session_budget: None,
            default_room_budget: None,
            attention_after: Some(Duration::from_secs(30)),
        }
    }
}
