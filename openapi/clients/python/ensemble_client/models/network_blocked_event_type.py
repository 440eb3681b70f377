from enum import StrEnum

class NetworkBlockedEventType(StrEnum):
    NETWORK_BLOCKED = "network.blocked"

    def __str__(self) -> str:
        return str(self.value)
