from enum import StrEnum

class CheckpointPhase(StrEnum):
    AFTER = "after"
    BEFORE = "before"
    RESTORE = "restore"

    def __str__(self) -> str:
        return str(self.value)
