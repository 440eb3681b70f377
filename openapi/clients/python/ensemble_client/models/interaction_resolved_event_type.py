from enum import StrEnum

class InteractionResolvedEventType(StrEnum):
    INTERACTION_RESOLVED = "interaction.resolved"

    def __str__(self) -> str:
        return str(self.value)
