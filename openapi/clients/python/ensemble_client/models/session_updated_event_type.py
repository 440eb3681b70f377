from enum import StrEnum

class SessionUpdatedEventType(StrEnum):
    SESSION_UPDATED = "session.updated"

    def __str__(self) -> str:
        return str(self.value)
