from enum import StrEnum

class SessionNeedsAttentionEventType(StrEnum):
    SESSION_NEEDS_ATTENTION = "session.needs_attention"

    def __str__(self) -> str:
        return str(self.value)
