from enum import StrEnum

class Role(StrEnum):
    ADMIN = "admin"
    APPROVER = "approver"
    OPERATOR = "operator"
    VIEWER = "viewer"

    def __str__(self) -> str:
        return str(self.value)
