from enum import StrEnum

class TurnChangesEventType(StrEnum):
    TURN_CHANGES = "turn.changes"

    def __str__(self) -> str:
        return str(self.value)
