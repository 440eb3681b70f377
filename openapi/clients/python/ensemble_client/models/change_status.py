from enum import StrEnum

class ChangeStatus(StrEnum):
    ADDED = "added"
    DELETED = "deleted"
    MODIFIED = "modified"
    RENAMED = "renamed"
    TYPE_CHANGED = "type_changed"

    def __str__(self) -> str:
        return str(self.value)
