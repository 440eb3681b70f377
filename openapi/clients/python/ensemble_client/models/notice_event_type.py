from enum import StrEnum

class NoticeEventType(StrEnum):
    NOTICE = "notice"

    def __str__(self) -> str:
        return str(self.value)
