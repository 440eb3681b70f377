from enum import StrEnum

class WorktreeWorkspaceKind(StrEnum):
    WORKTREE = "worktree"

    def __str__(self) -> str:
        return str(self.value)
