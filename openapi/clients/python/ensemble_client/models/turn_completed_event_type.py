from enum import StrEnum

class TurnCompletedEventType(StrEnum):
    TURN_COMPLETED = "turn.completed"

    def __str__(self) -> str:
        return str(self.value)
