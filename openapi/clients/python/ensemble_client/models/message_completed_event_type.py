from enum import StrEnum

class MessageCompletedEventType(StrEnum):
    MESSAGE_COMPLETED = "message.completed"

    def __str__(self) -> str:
        return str(self.value)
