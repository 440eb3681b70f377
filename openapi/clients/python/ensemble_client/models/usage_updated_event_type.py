from enum import StrEnum

class UsageUpdatedEventType(StrEnum):
    USAGE_UPDATED = "usage.updated"

    def __str__(self) -> str:
        return str(self.value)
