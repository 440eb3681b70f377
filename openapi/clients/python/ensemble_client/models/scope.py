from enum import StrEnum

class Scope(StrEnum):
    CANONICAL = "canonical"
    SIDE = "side"

    def __str__(self) -> str:
        return str(self.value)
