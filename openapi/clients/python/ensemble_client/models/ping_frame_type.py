from enum import StrEnum

class PingFrameType(StrEnum):
    PING = "ping"

    def __str__(self) -> str:
        return str(self.value)
