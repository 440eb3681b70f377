from enum import StrEnum

class CallStatus(StrEnum):
    COMPLETED = "completed"
    DECLINED = "declined"
    FAILED = "failed"
    INTERRUPTED = "interrupted"

    def __str__(self) -> str:
        return str(self.value)
