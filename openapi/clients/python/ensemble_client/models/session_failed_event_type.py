from enum import StrEnum

class SessionFailedEventType(StrEnum):
    SESSION_FAILED = "session.failed"

    def __str__(self) -> str:
        return str(self.value)
