from enum import StrEnum

class BudgetExhaustedEventType(StrEnum):
    BUDGET_EXHAUSTED = "budget.exhausted"

    def __str__(self) -> str:
        return str(self.value)
