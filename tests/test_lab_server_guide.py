"""The lab's server as docs/lab-server.md sets it up: its SQL, run as it stands against a
real server, gives a bot's role what running, erasing and migrating its study need and no
other study; and the analysts' role reads every study it is given and writes none."""

from __future__ import annotations

import re
from pathlib import Path

import psycopg
import pytest

from bot.pilot.emulator import BotApiEmulator
from tests.conftest import consent, say
from tests.e2e_support import PROJECT_ROOT, OzlabProcesses
from tests.postgres_server import PostgresServer
from tests.server_commands import here, numbers, ok, one_line, ozlab
from tests.store_reads import tables

pytestmark = pytest.mark.slow

GUIDE = PROJECT_ROOT / "docs" / "lab-server.md"
MARKED = re.compile(r"<!-- lab-sql -->\n```sql\n(.*?)```", re.DOTALL)


def guide_sql() -> list[str]:
    """The guide's statements for the server, block by block, in the order it gives them."""
    blocks = MARKED.findall(GUIDE.read_text(encoding="utf-8"))
    assert blocks, f"no <!-- lab-sql --> blocks in {GUIDE}"
    return [str(block) for block in blocks]


def test_the_guide_creates_the_database_first_and_a_study_last() -> None:
    blocks = guide_sql()
    assert blocks[0].strip() == "CREATE DATABASE lab;"
    assert "CREATE SCHEMA hmd AUTHORIZATION hmd_bot;" in blocks[-1]


def set_up_as_the_guide_says(postgres: PostgresServer) -> str:
    """Every block of the guide run on the test server, the study's for ``hmd`` and, with
    the study's own names, for ``xrec``; the lab database's URL as its superuser."""
    first, *rest = guide_sql()
    postgres.run_sql(first)
    lab = postgres.url_for("ozlab", "lab")
    for block in rest[:-1]:
        postgres.run_sql(block, url=lab)
    for study in ("hmd", "xrec"):
        postgres.run_sql(rest[-1].replace("hmd", study), url=lab)
    return lab


def statistics(url: str) -> list[str]:
    """What the planner's statistics of the study show ``url``'s role: each column's most
    common values and histogram bounds, as text."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT most_common_vals::text, histogram_bounds::text FROM pg_stats"
            " WHERE schemaname = 'hmd'"
        ).fetchall()
    return [str(value) for row in rows for value in row if value is not None]


async def test_a_bot_runs_and_erases_its_own_study_and_the_analysts_only_read(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    set_up_as_the_guide_says(postgres)
    bot, other, analyst = (postgres.url_for(role, "lab") for role in ("hmd_bot", "xrec_bot", "ada"))
    async with (
        BotApiEmulator("123456789:AAE-lab-guide-token-0123456789abcdefg") as first,
        BotApiEmulator("987654321:AAE-lab-other-token-0123456789abcdefg") as second,
    ):
        hmd, xrec = OzlabProcesses(first, tmp_path, bot), OzlabProcesses(second, tmp_path, other)
        try:
            running = await hmd.start(study="hmd")
            await xrec.start(study="xrec")  # its tables are made by its own role
            for user_id, words in ((801, "quartz lantern"), (802, "velvet compass")):
                p = first.participant(user_id)
                await consent(p)
                await say(p, words)
            assert await running.terminate() == 0
        finally:
            await hmd.close()
            await xrec.close()

    # the bot's role cannot read another study's tables, through ozlab or by hand
    with psycopg.connect(bot) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("SELECT * FROM xrec.sessions")
    refused = one_line(ozlab("report", "--db", bot, "--study", "xrec", cwd=tmp_path), 5)
    assert "permission denied" in refused

    # the analysts read the study (report, backup) and write nothing
    before = numbers(analyst, "--study", "hmd")
    assert before == numbers(f"{bot}?study=hmd")
    seen = tables(f"{analyst}?study=hmd")
    assert len(seen["participants"]) == 2
    with psycopg.connect(analyst) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("DELETE FROM hmd.exchanges")
    gone = seen["participants"][0]["participant_id"]
    assert one_line(ozlab("erase", "--db", f"{analyst}?study=hmd", gone, cwd=tmp_path), 5)
    ok(here("export", "--db", f"{analyst}?study=hmd", "--out", tmp_path / "export"))
    assert (tmp_path / "export" / "responses.csv").is_file()
    ok(here("power", analyst, "--study", "hmd"))
    backup = tmp_path / "hmd.sqlite"
    ok(here("backup", "--db", f"{analyst}?study=hmd", "--out", backup))
    assert tables(backup) == seen

    # the planner's statistics (pg_stats, which the analysts read) held the erased words;
    # the erasure analyses what it rewrote: they hold none of them after it
    postgres.run_sql("ANALYZE", url=postgres.url_for("ozlab", "lab"))
    session = next(r for r in seen["sessions"] if r["participant_id"] == gone)["session_id"]
    erased = [r["user_text"] for r in seen["exchanges"] if r["session_id"] == session]
    assert erased and all(any(w in s for s in statistics(analyst)) for w in erased)
    ok(here("erase", "--db", f"{bot}?study=hmd", gone))
    left = statistics(analyst)
    assert left, "the erasure left no statistics to plan with"
    assert not [s for s in left if gone in s or any(w in s for w in erased)], left
    after = tables(f"{analyst}?study=hmd")
    assert [r["participant_id"] for r in after["participants"]] == [
        r["participant_id"] for r in seen["participants"][1:]
    ]
    assert numbers(analyst, "--study", "hmd") != before
