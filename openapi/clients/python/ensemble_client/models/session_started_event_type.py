from enum import StrEnum

class SessionStartedEventType(StrEnum):
    SESSION_STARTED = "session.started"

    def __str__(self) -> str:
        return str(self.value)
