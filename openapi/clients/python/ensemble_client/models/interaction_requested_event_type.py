from enum import StrEnum

class InteractionRequestedEventType(StrEnum):
    INTERACTION_REQUESTED = "interaction.requested"

    def __str__(self) -> str:
        return str(self.value)
