from enum import StrEnum

class WorkspaceRestoredEventType(StrEnum):
    WORKSPACE_RESTORED = "workspace.restored"

    def __str__(self) -> str:
        return str(self.value)
