"""Workspaces through the generated client against the real server: a worktree session, a turn's
changes as a typed event and over REST, a restore, a commit on the session's branch, and the
workspace's files."""

from __future__ import annotations

import subprocess
from pathlib import Path

from ensemble_client import AuthenticatedClient
from ensemble_client.api.sessions import start_session
from ensemble_client.api.workspaces import (
    commit_workspace,
    file_content,
    fork_session,
    get_changes,
    get_workspace,
    list_checkpoints,
    list_files,
    restore,
    search_files,
)
from ensemble_client.models import (
    ChangeStatus,
    CheckpointList,
    CommitRequest,
    FileContent,
    ForkRequest,
    FileListing,
    FileSearch,
    RestoreRequest,
    Session,
    StartSessionRequest,
    TurnChangesEvent,
    WorkspaceChanges,
    WorkspaceCommittedEvent,
    WorkspaceCommittedPayload,
    WorkspaceInfo,
    WorkspaceKind,
    WorkspaceRestoredEvent,
    WorkspaceRestoredPayload,
    WorktreeWorkspace,
    WorktreeWorkspaceKind,
)
from ensemble_client.room import RoomStream
from ensemble_client.session import run_turn, session_events

from .conftest import Server


def git(cwd: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        env={"GIT_CONFIG_GLOBAL": "/dev/null", "PATH": "/usr/bin:/bin:/usr/local/bin"},
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout


async def test_a_worktree_session_through_the_client(server: Server) -> None:
    room, sid = "ws-py", "w1"
    repo = server.workspace / "py-repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "README.md").write_text("# demo\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "first")
    async with AuthenticatedClient(base_url=server.base_url, token=server.token) as api:
        started = await start_session.asyncio(
            room,
            client=api,
            body=StartSessionRequest(
                session_id=sid, workspace=WorktreeWorkspace(kind=WorktreeWorkspaceKind.WORKTREE, repo=str(repo))
            ),
        )
        assert isinstance(started, Session)
        assert started.workspace and started.workspace.kind == WorkspaceKind.WORKTREE
        assert started.workspace.branch == f"ensemble/{room}/{sid}"
        top = Path(str(started.workspace.path))

        async with RoomStream(server.base_url, server.token, room, after=0) as stream:
            result = await run_turn(api, server.base_url, server.token, room, sid, "/write notes.md from python")
            assert result.status == "completed"
            changes = None
            async for event in session_events(stream, sid, turn_id=result.turn_id):
                if isinstance(event, TurnChangesEvent):
                    changes = event
                    break
            assert changes is not None
            assert [(f.path, f.status) for f in changes.payload.files] == [("notes.md", ChangeStatus.ADDED)]

            checkpoints = await list_checkpoints.asyncio(room, sid, client=api)
            assert isinstance(checkpoints, CheckpointList) and len(checkpoints.data) == 2
            review = await get_changes.asyncio(room, sid, client=api, turn=result.turn_id)
            assert isinstance(review, WorkspaceChanges) and "+from python" in review.diff

            listing = await list_files.asyncio(room, sid, client=api)
            assert isinstance(listing, FileListing)
            assert {e.name for e in listing.entries} == {"README.md", "notes.md"}
            content = await file_content.asyncio(room, sid, client=api, path="notes.md")
            assert isinstance(content, FileContent) and content.content == "from python\n"
            found = await search_files.asyncio(room, sid, client=api, q="notes")
            assert isinstance(found, FileSearch) and [m.path for m in found.data] == ["notes.md"]

            info = await get_workspace.asyncio(room, sid, client=api)
            assert isinstance(info, WorkspaceInfo) and info.disk_bytes > 0
            assert info.workspace.branch == f"ensemble/{room}/{sid}"

            # A fork through the turn: a session of its own, in a worktree of its own, with the file.
            fork = await fork_session.asyncio(
                room, sid, client=api, body=ForkRequest(at_turn=result.turn_id, session_id="w1-fork")
            )
            assert isinstance(fork, Session) and fork.session_id == "w1-fork"
            assert fork.forked_from and fork.forked_from.session_id == sid
            assert fork.forked_from.turn_id == result.turn_id
            assert fork.workspace and fork.workspace.path and fork.workspace.path != str(top)
            assert (Path(fork.workspace.path) / "notes.md").read_text() == "from python\n"

            committed = await commit_workspace.asyncio(room, sid, client=api, body=CommitRequest(message="notes"))
            assert isinstance(committed, WorkspaceCommittedPayload)
            assert git(repo, "rev-parse", committed.branch).strip() == committed.commit

            restored = await restore.asyncio(
                room, sid, client=api, body=RestoreRequest(checkpoint=changes.payload.before)
            )
            assert isinstance(restored, WorkspaceRestoredPayload)
            assert not (top / "notes.md").exists()
            kinds = set()
            async for event in session_events(stream, sid):
                kinds.add(type(event))
                if isinstance(event, WorkspaceRestoredEvent):
                    break
            assert WorkspaceCommittedEvent in kinds
