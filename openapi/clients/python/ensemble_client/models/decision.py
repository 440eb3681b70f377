from enum import StrEnum

class Decision(StrEnum):
    ACCEPT = "accept"
    ACCEPTFORSESSION = "acceptForSession"
    CANCEL = "cancel"
    DECLINE = "decline"

    def __str__(self) -> str:
        return str(self.value)
