from enum import StrEnum

class ImageInputType(StrEnum):
    IMAGE = "image"

    def __str__(self) -> str:
        return str(self.value)
