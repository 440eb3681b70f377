from enum import StrEnum

class LimitsEnforcement(StrEnum):
    CGROUP_V1 = "cgroup_v1"
    CGROUP_V2 = "cgroup_v2"
    UNENFORCED = "unenforced"

    def __str__(self) -> str:
        return str(self.value)
