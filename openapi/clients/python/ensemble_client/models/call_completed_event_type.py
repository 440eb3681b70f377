from enum import StrEnum

class CallCompletedEventType(StrEnum):
    CALL_COMPLETED = "call.completed"

    def __str__(self) -> str:
        return str(self.value)
