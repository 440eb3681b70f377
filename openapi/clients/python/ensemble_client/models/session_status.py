from enum import StrEnum

class SessionStatus(StrEnum):
    COMPLETED = "completed"
    DISCONNECTED = "disconnected"
    FAILED = "failed"
    READY = "ready"
    STARTING = "starting"
    WAITING = "waiting"
    WORKING = "working"

    def __str__(self) -> str:
        return str(self.value)
