from enum import StrEnum

class GetSessionWait(StrEnum):
    IDLE = "idle"
    INPUT = "input"

    def __str__(self) -> str:
        return str(self.value)
