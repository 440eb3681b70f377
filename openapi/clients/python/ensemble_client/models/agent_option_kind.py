from enum import StrEnum

class AgentOptionKind(StrEnum):
    ALLOW_ALWAYS = "allow_always"
    ALLOW_ONCE = "allow_once"
    REJECT_ALWAYS = "reject_always"
    REJECT_ONCE = "reject_once"

    def __str__(self) -> str:
        return str(self.value)
