from enum import StrEnum

class TurnSteeredEventType(StrEnum):
    TURN_STEERED = "turn.steered"

    def __str__(self) -> str:
        return str(self.value)
