from enum import StrEnum

class PlanUpdatedEventType(StrEnum):
    PLAN_UPDATED = "plan.updated"

    def __str__(self) -> str:
        return str(self.value)
