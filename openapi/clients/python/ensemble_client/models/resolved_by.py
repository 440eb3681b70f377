from enum import StrEnum

class ResolvedBy(StrEnum):
    CLIENT = "client"
    CLOSE = "close"
    PROVIDER = "provider"
    RESTART = "restart"

    def __str__(self) -> str:
        return str(self.value)
