from enum import StrEnum

class WorkspaceKind(StrEnum):
    DIR = "dir"
    WORKTREE = "worktree"

    def __str__(self) -> str:
        return str(self.value)
