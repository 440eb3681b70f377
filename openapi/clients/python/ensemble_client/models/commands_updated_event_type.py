from enum import StrEnum

class CommandsUpdatedEventType(StrEnum):
    COMMANDS_UPDATED = "commands.updated"

    def __str__(self) -> str:
        return str(self.value)
