"""The study's results on request: the report (as HTML to read, and as JSON, whose findings
the other pages show) and the exports, each made by worker processes (``ozlab report``,
``ozlab export``: analytics never loads in the page's process, whose loop never waits on
it), kept until the study's data changes. Their files hold participants' data: a private
folder (0700, files 0600), removed when replaced or at exit; the workers enter them in the
study's register of files written, as always. The change token is read once the workers
are done (their entries in the register are changes, which keep what was current before
them current): a commit the bot made meanwhile is seen at the next."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from bot.core.errors import StudyDataError
from lab_web.findings import Findings, read_findings
from lab_web.lab import Study

WORKER_SECONDS = 600.0
"""The longest a report or an export may take before it is given up."""


@dataclass(frozen=True)
class Made:
    """What a worker made, and the study's change token it was made at."""

    token: int
    folder: Path

    def files(self) -> list[Path]:
        return sorted(p for p in self.folder.iterdir() if p.is_file())


def study_url(study: Study) -> str:
    """The ``--db`` that names the study for a worker (a server's study in ``?study=``)."""
    if study.study is None:
        return study.db
    parts = urlsplit(study.db)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "study"] + [("study", study.study)]
    return urlunsplit(parts._replace(query=urlencode(query)))


class Results:
    """One study's report and exports, each kept while the data stays as it was."""

    def __init__(self, study: Study) -> None:
        self.study = study
        self._made: dict[str, Made] = {}
        self._findings: tuple[Path, Findings] | None = None  # of the report's folder
        self._building: dict[str, asyncio.Lock] = {
            "report": asyncio.Lock(),
            "exports": asyncio.Lock(),
        }

    async def current(self, kind: str) -> Made | None:
        """The report or exports made at the study's present state; None when there are
        none, or the data changed since (those are removed)."""
        made = self._made.get(kind)
        if made is None:
            return None
        if made.token != await self.study.desk.changes():
            self._forget(kind)
            return None
        return made

    async def build(self, kind: str) -> Made:
        """Make the report (``kind`` "report") or the exports ("exports") again, unless the
        ones kept are of the present data."""
        async with self._building[kind]:
            kept = await self.current(kind)
            if kept is not None:
                return kept
            before = await self.study.desk.changes()
            folder = Path(tempfile.mkdtemp(prefix=f"ozlab-web-{kind}-"))
            url = study_url(self.study)
            if kind == "report":  # the page's HTML and the findings' JSON, side by side
                commands = [
                    ["report", "--db", url, "--format", f, "--out", str(folder / f"report.{f}")]
                    for f in ("html", "json")
                ]
            else:
                commands = [["export", "--db", url, "--out", str(folder)]]
            try:
                done = await asyncio.gather(*map(_work, commands), return_exceptions=True)
                for failed in done:
                    if failed is not None:
                        raise failed
            except BaseException:
                shutil.rmtree(folder, ignore_errors=True)
                raise
            await asyncio.to_thread(_private, folder)
            # after the workers: their entries in the register of files written are changes,
            # which what was current before it (the other kind) stays current through
            token = await self.study.desk.changes()
            self._forget(kind)
            for other, made in self._made.items():
                if made.token == before:
                    self._made[other] = replace(made, token=token)
            self._made[kind] = Made(token, folder)
            return self._made[kind]

    async def findings(self) -> Findings | None:
        """What the report of the present data found (None when there is none), read from
        its JSON once."""
        made = await self.current("report")
        if made is None:
            return None
        if self._findings is None or self._findings[0] != made.folder:
            found = await asyncio.to_thread(read_findings, made.folder / "report.json")
            self._findings = (made.folder, found)
        return self._findings[1]

    def _forget(self, kind: str) -> None:
        made = self._made.pop(kind, None)
        if made is not None:
            shutil.rmtree(made.folder, ignore_errors=True)

    def close(self) -> None:
        for kind in list(self._made):
            self._forget(kind)


def _private(folder: Path) -> None:
    for path in folder.rglob("*"):
        path.chmod(0o600 if path.is_file() else 0o700)


async def _work(arguments: list[str]) -> None:
    """``ozlab ARGUMENTS`` in a worker process; its one line when it fails."""
    worker = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot.cli",
        *arguments,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env=os.environ.copy(),
    )
    try:
        async with asyncio.timeout(WORKER_SECONDS):
            _, said = await worker.communicate()
    except TimeoutError:
        worker.kill()
        await worker.wait()
        raise StudyDataError(
            f"ozlab {arguments[0]} took longer than {WORKER_SECONDS:.0f} s"
        ) from None
    if worker.returncode != 0:
        lines = said.decode(errors="replace").strip().splitlines()
        raise StudyDataError(lines[-1] if lines else f"ozlab {arguments[0]} failed")
