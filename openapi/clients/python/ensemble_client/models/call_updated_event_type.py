from enum import StrEnum

class CallUpdatedEventType(StrEnum):
    CALL_UPDATED = "call.updated"

    def __str__(self) -> str:
        return str(self.value)
