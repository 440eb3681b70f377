from enum import StrEnum

class GoalReconcileRequiredEventType(StrEnum):
    GOAL_RECONCILE_REQUIRED = "goal.reconcile_required"

    def __str__(self) -> str:
        return str(self.value)
