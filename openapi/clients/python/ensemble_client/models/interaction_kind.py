from enum import StrEnum

class InteractionKind(StrEnum):
    COMMANDAPPROVAL = "commandApproval"
    FILECHANGEAPPROVAL = "fileChangeApproval"
    PERMISSIONS = "permissions"
    USERINPUT = "userInput"

    def __str__(self) -> str:
        return str(self.value)
