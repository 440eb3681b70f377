from enum import StrEnum

class ResyncFrameType(StrEnum):
    RESYNC = "resync"

    def __str__(self) -> str:
        return str(self.value)
