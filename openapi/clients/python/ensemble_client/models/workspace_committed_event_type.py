from enum import StrEnum

class WorkspaceCommittedEventType(StrEnum):
    WORKSPACE_COMMITTED = "workspace.committed"

    def __str__(self) -> str:
        return str(self.value)
