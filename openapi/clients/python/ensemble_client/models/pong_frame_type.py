from enum import StrEnum

class PongFrameType(StrEnum):
    PONG = "pong"

    def __str__(self) -> str:
        return str(self.value)
