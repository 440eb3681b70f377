from enum import StrEnum

class GoalClearedEventType(StrEnum):
    GOAL_CLEARED = "goal.cleared"

    def __str__(self) -> str:
        return str(self.value)
