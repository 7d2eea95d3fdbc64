"""Which systems under test are failing, so new participants are not sent to them.

A system is marked unavailable after a run of consecutive failed calls and available again
after its next successful one; the runner logs both moments for the experimenters.
"""

from __future__ import annotations


class SystemHealth:
    def __init__(self, threshold: int = 3) -> None:
        self._threshold = threshold
        self._failures: dict[str, int] = {}
        self._down: set[str] = set()

    @property
    def unavailable(self) -> frozenset[str]:
        return frozenset(self._down)

    def failed(self, system_id: str) -> bool:
        """Count a failure; True when this one makes the system unavailable."""
        self._failures[system_id] = self._failures.get(system_id, 0) + 1
        if self._failures[system_id] >= self._threshold and system_id not in self._down:
            self._down.add(system_id)
            return True
        return False

    def succeeded(self, system_id: str) -> bool:
        """Reset the count; True when the system was unavailable until now."""
        self._failures[system_id] = 0
        if system_id in self._down:
            self._down.discard(system_id)
            return True
        return False

    def failures(self, system_id: str) -> int:
        return self._failures.get(system_id, 0)
