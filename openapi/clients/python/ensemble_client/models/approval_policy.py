from enum import StrEnum

class ApprovalPolicy(StrEnum):
    NEVER = "never"
    ON_REQUEST = "on-request"
    UNTRUSTED = "untrusted"

    def __str__(self) -> str:
        return str(self.value)
