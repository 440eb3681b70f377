from enum import StrEnum

class FileInputType(StrEnum):
    FILE = "file"

    def __str__(self) -> str:
        return str(self.value)
