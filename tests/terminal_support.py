"""A command run in a pseudo-terminal, read and typed into as a person at a terminal would.

Reading waits on the terminal with ``select`` until the expected text appears or a timeout
passes: no sleeping. ``expect`` reads on from where the last match ended, so a text the
program printed before is never matched twice.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import subprocess
import termios
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Self


def _controlling_terminal() -> None:
    """In the child: a session of its own with the pseudo-terminal as its terminal, so that
    Ctrl-C typed there is a SIGINT, as in a terminal window."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    def __init__(self, argv: Sequence[str], *, cwd: Path, env: dict[str, str]) -> None:
        self._master, slave = os.openpty()
        self.process = subprocess.Popen(
            list(argv),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            env=env,
            close_fds=True,
            preexec_fn=_controlling_terminal,  # the child's own session: Ctrl-C is its SIGINT
        )
        os.close(slave)
        self.output = ""
        self._cursor = 0

    def _read(self, until: float) -> bool:
        """Read what is there within the time left; False at the end of the output."""
        ready, _, _ = select.select([self._master], [], [], max(0.0, until - time.monotonic()))
        if not ready:
            return True
        try:
            data = os.read(self._master, 65536)
        except OSError:  # EIO: the program ended and closed the terminal
            return False
        if not data:
            return False
        self.output += data.decode("utf-8", "replace").replace("\r", "")
        return True

    def expect(self, pattern: str, timeout: float = 30.0) -> re.Match[str]:
        """Wait for ``pattern`` (a regular expression) after the last match; the match."""
        until = time.monotonic() + timeout
        compiled = re.compile(pattern, re.MULTILINE)
        while True:
            found = compiled.search(self.output, self._cursor)
            if found:
                self._cursor = found.end()
                return found
            if time.monotonic() >= until or not self._read(until):
                tail = self.output[self._cursor :][-3000:]
                raise AssertionError(f"no {pattern!r} within {timeout:g} s; after it:\n{tail}")

    def type(self, line: str) -> None:
        os.write(self._master, line.encode() + b"\n")

    def press(self, key: bytes) -> None:
        """A control key: b"\\x03" is Ctrl-C, b"\\x04" Ctrl-D (at the start of a line)."""
        os.write(self._master, key)

    def wait(self, timeout: float = 30.0) -> int:
        """The exit status, reading the rest of the output meanwhile."""
        until = time.monotonic() + timeout
        while self._read(until) and time.monotonic() < until:
            if self.process.poll() is not None and not select.select([self._master], [], [], 0)[0]:
                break
        return self.process.wait(timeout=max(0.1, until - time.monotonic()))

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self._master)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
