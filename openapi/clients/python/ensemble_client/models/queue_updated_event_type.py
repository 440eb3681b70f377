from enum import StrEnum

class QueueUpdatedEventType(StrEnum):
    QUEUE_UPDATED = "queue.updated"

    def __str__(self) -> str:
        return str(self.value)
