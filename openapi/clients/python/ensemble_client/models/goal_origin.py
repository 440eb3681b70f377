from enum import StrEnum

class GoalOrigin(StrEnum):
    PROVIDER = "provider"
    USER = "user"

    def __str__(self) -> str:
        return str(self.value)
