from enum import StrEnum

class TextInputType(StrEnum):
    TEXT = "text"

    def __str__(self) -> str:
        return str(self.value)
