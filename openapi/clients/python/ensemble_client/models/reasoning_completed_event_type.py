from enum import StrEnum

class ReasoningCompletedEventType(StrEnum):
    REASONING_COMPLETED = "reasoning.completed"

    def __str__(self) -> str:
        return str(self.value)
