from enum import StrEnum

class OpenTextKind(StrEnum):
    MESSAGE = "message"
    REASONING = "reasoning"

    def __str__(self) -> str:
        return str(self.value)
