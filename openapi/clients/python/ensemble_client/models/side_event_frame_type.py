from enum import StrEnum

class SideEventFrameType(StrEnum):
    SIDE_EVENT = "side_event"

    def __str__(self) -> str:
        return str(self.value)
