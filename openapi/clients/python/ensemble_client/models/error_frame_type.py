from enum import StrEnum

class ErrorFrameType(StrEnum):
    ERROR = "error"

    def __str__(self) -> str:
        return str(self.value)
