from enum import StrEnum

class ReasoningDeltaEventType(StrEnum):
    REASONING_DELTA = "reasoning.delta"

    def __str__(self) -> str:
        return str(self.value)
