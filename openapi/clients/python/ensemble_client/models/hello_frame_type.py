from enum import StrEnum

class HelloFrameType(StrEnum):
    HELLO = "hello"

    def __str__(self) -> str:
        return str(self.value)
