from enum import StrEnum

class GoalUpdatedEventType(StrEnum):
    GOAL_UPDATED = "goal.updated"

    def __str__(self) -> str:
        return str(self.value)
