from enum import StrEnum

class SandboxMode(StrEnum):
    DANGER_FULL_ACCESS = "danger-full-access"
    READ_ONLY = "read-only"
    WORKSPACE_WRITE = "workspace-write"

    def __str__(self) -> str:
        return str(self.value)
