from enum import StrEnum

class MessageDeltaEventType(StrEnum):
    MESSAGE_DELTA = "message.delta"

    def __str__(self) -> str:
        return str(self.value)
