from enum import StrEnum

class AllHosts(StrEnum):
    ALL = "all"

    def __str__(self) -> str:
        return str(self.value)
