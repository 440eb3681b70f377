from enum import StrEnum

class CallKind(StrEnum):
    COMMAND = "command"
    FILECHANGE = "fileChange"
    MCP = "mcp"
    OTHER = "other"
    TOOL = "tool"
    WEBSEARCH = "webSearch"

    def __str__(self) -> str:
        return str(self.value)
