from enum import StrEnum

class CollaborationMode(StrEnum):
    DEFAULT = "default"
    PLAN = "plan"

    def __str__(self) -> str:
        return str(self.value)
