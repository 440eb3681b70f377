from enum import StrEnum

class EventFrameType(StrEnum):
    EVENT = "event"

    def __str__(self) -> str:
        return str(self.value)
