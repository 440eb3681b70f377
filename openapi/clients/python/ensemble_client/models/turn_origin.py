from enum import StrEnum

class TurnOrigin(StrEnum):
    GOAL_CONTINUATION = "goal_continuation"
    PROVIDER = "provider"
    USER = "user"

    def __str__(self) -> str:
        return str(self.value)
