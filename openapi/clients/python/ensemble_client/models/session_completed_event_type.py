from enum import StrEnum

class SessionCompletedEventType(StrEnum):
    SESSION_COMPLETED = "session.completed"

    def __str__(self) -> str:
        return str(self.value)
