from enum import StrEnum

class TurnFailedEventType(StrEnum):
    TURN_FAILED = "turn.failed"

    def __str__(self) -> str:
        return str(self.value)
