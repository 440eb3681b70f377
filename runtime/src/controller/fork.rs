//! Durable forks: a new session in a worktree of its own at the checkpoint after one of a
//! session's turns, its conversation forked through that turn where the provider can.

use std::path::Path;

use super::Controller;
use super::error::{ControllerError, Result};
use super::requests::{ForkFrom, StartSession};
use super::workspaces::WorkspaceRequest;
use ensemble_core::model::{SessionKey, WorkspaceKind};
use ensemble_core::shared_session::SharedSession;
use ensemble_core::workspace::{CheckpointInfo, CheckpointPhase};

/// `POST …/sessions/{id}/fork`.
#[derive(Clone, Debug)]
pub struct ForkSession {
    pub source: SessionKey,
    /// The fork's id; generated when absent.
    pub session_id: Option<String>,
    /// The source's turn the fork goes through.
    pub at_turn: String,
    pub title: Option<String>,
}

impl Controller {
    /// Starts the fork: its worktree from the checkpoint after `at_turn` (on a new branch), the
    /// source's provider, settings and place in the tree, and the conversation through that turn
    /// (422 `fork_unsupported` with the provider's reason when it cannot).
    pub async fn fork(&self, req: ForkSession) -> Result<SharedSession> {
        let source = self.snapshot(&req.source)?;
        // A checkpointed session has a workspace; its top is where the checkpoints are.
        let (Some(top), Some(ws)) = (Self::checkpointed(&source), source.workspace.clone()) else {
            return Err(ControllerError::NoWorkspace(
                "only a session with checkpoints can be forked (its cwd is not in a git work tree)".into(),
            ));
        };
        // Waits for a checkpoint being taken (the one after a turn that just ended).
        let checkpoints = self.checkpoints(&req.source).await?;
        let last_turn =
            checkpoints.iter().rev().find(|c| c.phase == CheckpointPhase::After).and_then(|c| c.turn_id.clone());
        let checkpoint = in_force_after(&checkpoints, &req.at_turn)
            .cloned()
            .ok_or_else(|| ControllerError::UnknownCheckpoint(format!("the checkpoint after turn {}", req.at_turn)))?;
        // The fork's branch starts at the commit the checkpoint was taken on (the source's HEAD
        // then, a commit of the user's repository); its files are the checkpoint's.
        let (_, shadow) = self.place_of(&source).await?;
        let base = self.git()?.resolve(&shadow, &format!("{}^", checkpoint.commit)).await?.ok_or_else(|| {
            ControllerError::NoWorkspace(
                "the checkpoint was taken before the repository had a commit: there is no commit to branch from".into(),
            )
        })?;
        // A worktree's repository is the one it was made from; a dir session's is its work tree.
        let repo = match ws.kind {
            WorkspaceKind::Worktree => ws.repo.clone().unwrap_or_default(),
            WorkspaceKind::Dir => top.to_string_lossy().into_owned(),
        };
        // Where in the tree the source works, so the fork works in the same place of its own.
        let cwd = Path::new(&source.cwd)
            .strip_prefix(&top)
            .ok()
            .map(|p| p.to_string_lossy().into_owned())
            .filter(|p| !p.is_empty());
        let title = req.title.clone().unwrap_or_else(|| {
            if source.title.is_empty() { "fork".to_owned() } else { format!("{} (fork)", source.title) }
        });
        self.start_shared(StartSession {
            room_id: req.source.room_id.clone(),
            session_id: req.session_id.clone(),
            provider: Some(source.provider.clone()),
            title: Some(title),
            cwd: None,
            settings: source.settings.clone(),
            workspace: WorkspaceRequest::Worktree {
                repo: repo.into(),
                base: Some(base),
                branch: None,
                cwd,
                fill: Some(checkpoint.commit.clone()),
            },
            checkpoints: None,
            // The source's box, never a wider one.
            isolation: source
                .isolation
                .as_deref()
                .filter(|i| i.mode == ensemble_core::isolation::IsolationMode::On)
                .map(|i| ensemble_core::isolation::IsolationRequest {
                    network: match &i.network {
                        ensemble_core::isolation::NetworkAccess::Endpoints(e) => Some(e.clone()),
                        ensemble_core::isolation::NetworkAccess::All(_) => None,
                    },
                    memory_mb: i.memory_mb,
                    max_processes: i.max_processes,
                }),
            fork: Some(ForkFrom { source, through_turn: req.at_turn.clone(), last_turn, checkpoint: checkpoint.id }),
            provider_session: None,
        })
        .await
    }
}

/// The checkpoint in force once `turn` ended: the one taken after it, or, when it has none (its
/// after-checkpoint failed), the next one taken after its start (the next turn's, or a
/// restore's), which holds the work tree as that turn left it.
fn in_force_after<'a>(list: &'a [CheckpointInfo], turn: &str) -> Option<&'a CheckpointInfo> {
    let ours = |c: &&CheckpointInfo| c.turn_id.as_deref() == Some(turn);
    if let Some(after) = list.iter().rev().filter(ours).find(|c| c.phase == CheckpointPhase::After) {
        return Some(after);
    }
    let before = list.iter().rposition(|c| ours(&c) && c.phase == CheckpointPhase::Before)?;
    list.get(before + 1)
}
