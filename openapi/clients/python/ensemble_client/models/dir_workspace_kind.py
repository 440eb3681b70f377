from enum import StrEnum

class DirWorkspaceKind(StrEnum):
    DIR = "dir"

    def __str__(self) -> str:
        return str(self.value)
