from enum import StrEnum

class GoalStatus(StrEnum):
    ACTIVE = "active"
    BLOCKED = "blocked"
    COMPLETE = "complete"
    PAUSED = "paused"

    def __str__(self) -> str:
        return str(self.value)
