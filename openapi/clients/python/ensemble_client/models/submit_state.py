from enum import StrEnum

class SubmitState(StrEnum):
    AVAILABLE = "available"
    BLOCKED = "blocked"

    def __str__(self) -> str:
        return str(self.value)
