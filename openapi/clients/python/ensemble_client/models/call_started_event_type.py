from enum import StrEnum

class CallStartedEventType(StrEnum):
    CALL_STARTED = "call.started"

    def __str__(self) -> str:
        return str(self.value)
