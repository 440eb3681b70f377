from enum import StrEnum

class TurnCanceledEventType(StrEnum):
    TURN_CANCELED = "turn.canceled"

    def __str__(self) -> str:
        return str(self.value)
