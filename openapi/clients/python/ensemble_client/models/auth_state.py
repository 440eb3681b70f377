from enum import StrEnum

class AuthState(StrEnum):
    AUTHENTICATED = "authenticated"
    AUTH_REQUIRED = "auth_required"

    def __str__(self) -> str:
        return str(self.value)
