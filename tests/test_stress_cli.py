"""``ozlab stress`` as a researcher types it: a wrong --db, authored tests imported, the
suggestions listed, a language model's proposals reviewed at the terminal, and the model
judging replays (against a fake OpenAI-compatible server on loopback)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bot.core.phenomena import StressType
from bot.engine import effects as fx
from bot.store.sqlite import open_store
from bot.store.stress_records import Judge, Replay, ReplyTaken, Review, Verdict
from tests.fake_servers import FakeOpenAI
from tests.store_contract.records import session, step
from tests.stress_support import OZLAB, ozlab

pytestmark = pytest.mark.slow  # whole commands, reports or renderings: make test, not make check

LINE = "Is Moss Hollow on Alex's wishlist?"


async def logged(db: Path, model_url: str = "http://127.0.0.1:9") -> None:
    store = await open_store(db)
    await store.commit_step(
        step(
            "p",
            *session("p"),
            fx.RecordUserTurn("p-1", 1, LINE),
            fx.RecordSystemTurn("p-1", 1, "No, it is not.", 3.0),
        )
    )
    model = {"type": "openai", "id": "proposer", "url": model_url, "model": "m", "retries": 0}
    definition = {"study": {"systems": [], "stress_model": model}, "scenarios": {}}
    await store.record_definition("s", json.dumps(definition))
    await store.close()


async def run(*args: str, stdin: str = "") -> tuple[int, str, str]:
    """``ozlab ARGS`` in a subprocess while this loop keeps serving the fake model."""
    child = await asyncio.create_subprocess_exec(
        OZLAB, *args, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(child.communicate(stdin.encode()), 60)
    assert child.returncode is not None
    return child.returncode, out.decode(), err.decode()


def test_a_wrong_database_is_one_line(tmp_path: Path) -> None:
    done = ozlab("stress", "run", "--db", str(tmp_path / "nothing.sqlite"))
    assert done.returncode == 5
    assert done.stderr.strip().count("\n") == 0 and "no study database" in done.stderr
    assert not (tmp_path / "nothing.sqlite").exists()  # never created


async def test_authored_tests_are_imported_and_suggestions_listed(tmp_path: Path) -> None:
    db = tmp_path / "study.sqlite"
    await logged(db)
    said = ozlab("stress", "suggest", "--db", str(db), "--types", "ST-7")
    assert said.returncode == 0, said.stderr
    assert "ST-7 coreference: 1 logged utterances" in said.stdout and LINE in said.stdout
    authored = tmp_path / "authored.yaml"
    authored.write_text(
        "tests:\n  - session: p-1\n    turn: 1\n    type: ST-7\n"
        '    perturbed: "Is the game with the moss on Alex\'s wishlist?"\n'
    )
    imported = ozlab("stress", "import", "--db", str(db), str(authored))
    assert imported.returncode == 0, imported.stderr
    assert "1 authored tests read (1 ST-7; 0 ad hoc); 1 new" in imported.stdout
    again = ozlab("stress", "import", "--db", str(db), str(authored))
    assert "0 new" in again.stdout
    store = await open_store(db)
    [test] = await store.stress_tests()
    await store.close()
    assert (test.perturbation.original, test.review) == (LINE, Review.ACCEPTED)


async def test_proposals_are_reviewed_and_the_model_judges(tmp_path: Path) -> None:
    db = tmp_path / "study.sqlite"
    proposal = {"perturbed": "Is that mossy game on Alex's wishlist?", "change": "coreference"}
    async with FakeOpenAI(json.dumps(proposal)) as server:
        await logged(db, server.url)
        code, out, err = await run(
            "stress", "propose", "--db", str(db), "--types", "ST-7", stdin="e\nIs it there?\n"
        )
        assert code == 0, err
        assert "1 proposals by m" in out and "Reviewed 1: 1 accepted or edited" in out
        store = await open_store(db)
        [test] = await store.stress_tests([StressType.ST_7])
        assert (test.perturbation.perturbed, test.review) == ("Is it there?", Review.ACCEPTED)
        await store.record_replay(
            Replay(test.id, "sys", 1.0, 2.0, ReplyTaken(("No.",)), ReplyTaken(("Which?",)), True)
        )
        await store.close()
        server.reply = "PASS"
        code, out, err = await run("stress", "judge", "--db", str(db), "--model")
        assert code == 0, err
        assert "1 verdicts by m (1 pass)" in out and "no replay judged by both yet" in out
        assert "0 answers were no verdict after a retry (they wait for a person)" in out
    store = await open_store(db)
    [result] = await store.stress_results()
    await store.close()
    assert result.by(Judge.LLM).verdict is Verdict.PASS  # type: ignore[union-attr]
