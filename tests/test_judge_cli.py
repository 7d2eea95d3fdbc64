"""``ozlab judge run`` as a researcher types it, against a local OpenAI-compatible server:
a job without judges is one line and its status; a run killed halfway resumes without a
second call for what was judged; a rerun calls nothing; one writer: a judge run beside a
running bot is refused, and no bot starts while a judge runs, on a file and on a server."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from bot.core.errors import StoreError
from bot.store import open_store as open_any
from bot.store.claims import claim
from bot.store.definition import definition_json
from bot.store.sqlite import open_store
from scenarios.loading import load_study
from tests.annotation_support import store_conversations, store_study
from tests.fake_servers import FakeOpenAI, Mode
from tests.postgres_server import PostgresServer
from tests.stress_support import OZLAB
from tests.test_judge_run import SESSIONS, judge_says

pytestmark = pytest.mark.slow  # whole commands in processes of their own

LIBRARY = Path(__file__).resolve().parents[1] / "scenarios" / "library"
FULL_RUN_CALLS = 10  # 7 targets, 3 of them asked twice (tests/test_judge_run.py)


def study_with_judge(folder: Path, url: str | None, *, replace: bool = False) -> Path:
    """The shipped HRI CUES study, its job's judge one at ``url`` (None: no judge);
    ``replace``: the files written before, changed."""
    (folder / "jobs").mkdir(parents=True, exist_ok=replace)
    job = ((LIBRARY / "jobs") / "hri-cues.yaml").read_text()
    job = job[: job.index("\njudges:\n")]  # the shipped judge left out
    judge = f"judges:\n  - {{id: gpt-judge, url: '{url}', model: judge-m, seed: 3}}\n"
    (folder / "jobs" / "hri-cues.yaml").write_text(job + ("\n" + judge if url else "\n"))
    study = folder / "study.yaml"
    study.write_text(((LIBRARY / "studies") / "hri-cues.yaml").read_text())
    return study


async def stored(db: Path) -> None:
    store = await open_store(db)
    await store_study(store, "hri-cues", "hri-cues-chat", SESSIONS)
    await store.close()


async def ozlab(*args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    child = await asyncio.create_subprocess_exec(
        OZLAB, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=cwd
    )
    out, err = await asyncio.wait_for(child.communicate(), 60)
    assert child.returncode is not None
    return child.returncode, out.decode(), err.decode()


async def test_a_job_without_judges_is_one_line(tmp_path: Path) -> None:
    db = tmp_path / "cues.sqlite"
    await stored(db)
    study = study_with_judge(tmp_path, None)
    args = ("judge", "run", "--db", str(db), "--job", "hri-cues", "--study", str(study))
    status, _, err = await ozlab(*args)
    assert (
        status == 3
        and err.strip() == "ozlab: job 'hri-cues' names no judges: add judges to the job file"
    )


async def test_judges_added_to_the_job_file_after_the_study_was_stored_are_told_apart(
    tmp_path: Path,
) -> None:
    """A researcher adds judges to the job file of a study the database already holds, and
    runs the judge without ``--study``: one line says that the file and the stored job
    differ and the command that reads the file, which then runs the judges."""
    db = tmp_path / "cues.sqlite"
    study = study_with_judge(tmp_path / "hri-cues", None)
    store = await open_store(db)
    await store.record_definition("hri-cues", definition_json(load_study(study)))
    await store_conversations(store, "hri-cues", "hri-cues-chat", SESSIONS)
    await store.close()
    async with FakeOpenAI(reply=judge_says) as server:
        study_with_judge(tmp_path / "hri-cues", server.url, replace=True)
        args = ("judge", "run", "--db", str(db), "--job", "hri-cues")
        status, _, err = await ozlab(*args, cwd=tmp_path)
        assert status == 3 and len(err.strip().splitlines()) == 1, err
        assert err.strip() == (
            "ozlab: job 'hri-cues' as stored in the database names no judges,"
            " hri-cues/study.yaml names gpt-judge: the file and the stored job differ (the"
            " database keeps the study as the bot last started it); bring the change in with:"
            f" ozlab judge run --db {db} --job hri-cues --study hri-cues/study.yaml"
        )
        assert not server.requests
        # elsewhere, no study file to compare with: the same advice, the file to be named
        status, _, err = await ozlab(
            *args, "--judge", "gpt-judge", cwd=tmp_path / "hri-cues" / "jobs"
        )
        assert status == 3 and err.strip() == (
            "ozlab: job 'hri-cues' as stored in the database names no judges (the study as"
            " the bot last started it): if the job file names judge 'gpt-judge', the file and"
            " the stored job differ; bring the change in by reading the study file:"
            f" ozlab judge run --db {db} --job hri-cues --judge gpt-judge --study STUDY_FILE"
        )
        status, out, err = await ozlab(*args, "--study", "hri-cues/study.yaml", cwd=tmp_path)
        assert status == 0, err
        assert "7 targets judged" in out and len(server.requests) == FULL_RUN_CALLS


async def test_a_killed_run_resumes_without_asking_again(tmp_path: Path) -> None:
    db = tmp_path / "cues.sqlite"
    await stored(db)
    answered = 0

    def then_hold(body: dict[str, Any]) -> str:
        nonlocal answered
        answered += 1
        if answered == 4:
            server.behave(Mode.HOLD)  # the fifth call hangs: the run is killed meanwhile
        return judge_says(body)

    async with FakeOpenAI(reply=then_hold) as server:
        study = study_with_judge(tmp_path, server.url)
        args = ("judge", "run", "--db", str(db), "--job", "hri-cues", "--study", str(study))
        child = await asyncio.create_subprocess_exec(
            OZLAB, *args, *("--concurrency", "1"),
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        await server.wait_for_requests(5, timeout=60)
        os.kill(child.pid, signal.SIGKILL)
        await child.wait()
        server.release()
        server.behave(Mode.NORMAL)
        status, out, err = await ozlab(*args)
        assert status == 0, err
        # every call of a whole run once, and the one the kill cut short once more
        assert len(server.requests) == FULL_RUN_CALLS + 1
        assert "7 targets" not in out  # some were judged before the kill
        status, out, _ = await ozlab(*args)
        assert status == 0 and len(server.requests) == FULL_RUN_CALLS + 1
        assert "0 calls made" in out and "1 answers unparseable after a retry" in out
    assert not db.with_name(db.name + ".judges").exists()  # every call is in the database


async def test_a_missing_api_key_is_one_line_naming_the_variable(tmp_path: Path) -> None:
    db = tmp_path / "cues.sqlite"
    await stored(db)
    study = study_with_judge(tmp_path, "http://127.0.0.1:9")
    job = tmp_path / "jobs" / "hri-cues.yaml"
    job.write_text(job.read_text().replace("seed: 3}", "seed: 3, api_key_env: OZ_JUDGE_KEY}"))
    args = ("judge", "run", "--db", str(db), "--job", "hri-cues", "--study", str(study))
    status, _, err = await ozlab(*args)
    assert status == 4 and err.count("\n") == 1 and "OZ_JUDGE_KEY (api_key_env) is not set" in err
    assert err.startswith("ozlab: judge 'gpt-judge':")


async def one_writer_with_judges(db: str, tmp_path: Path) -> None:
    """Beside the bot's writer's lock the run is refused in one line, status 5, before any
    call; while a run holds the lock, a bot starting on the study is refused."""
    async with FakeOpenAI(reply=judge_says) as server:
        study = study_with_judge(tmp_path, server.url)
        args = ("judge", "run", "--db", db, "--job", "hri-cues", "--study", str(study))
        with claim(db, "ozlab run"):
            status, out, err = await ozlab(*args)
        assert status == 5 and err.count("\n") == 1, err
        assert "taken by another writer (" in err and "ozlab run" in err and out == ""
        assert server.requests == []
        server.behave(Mode.HOLD)
        child = await asyncio.create_subprocess_exec(
            OZLAB, *args, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
        )
        try:
            await server.wait_for_requests(1, timeout=60)
            with pytest.raises(StoreError, match=r"taken by another writer.*ozlab judge run"):
                claim(db, "ozlab run")
        finally:
            child.kill()
            await child.wait()
            server.release()


async def test_a_judge_run_and_a_bot_are_never_writers_of_one_file_at_once(
    tmp_path: Path,
) -> None:
    db = tmp_path / "cues.sqlite"
    await stored(db)
    await one_writer_with_judges(str(db), tmp_path)


async def test_a_judge_run_and_a_bot_are_never_writers_of_one_study_on_a_server(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    db = postgres.fresh_database()
    store = await open_any(db, study="hri-cues")
    try:
        await store_study(store, "hri-cues", "hri-cues-chat", SESSIONS)
    finally:
        await store.close()
    await one_writer_with_judges(db, tmp_path)
