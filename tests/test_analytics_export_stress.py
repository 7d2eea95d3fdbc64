"""The stress tests in ``ozlab export``: one row per test and system with every judge's
verdict, read back from the CSV a researcher opens; a spreadsheet formula in an utterance is
neutralised as every other text."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from bot.cli import analytics_main as main
from bot.core.phenomena import StressType
from bot.core.stress import Perturbation, Source
from bot.engine import effects as fx
from bot.store.blocking import run_blocking
from bot.store.sqlite import open_store
from bot.store.stress_records import Judge, Judgement, Replay, ReplyTaken, Review, Verdict
from tests.store_contract.records import session, step


def _study(db: Path, *, replayed: bool) -> None:
    async def work() -> None:
        async with await open_store(db) as store:
            await store.commit_step(
                step(
                    "p",
                    *session("p"),
                    fx.RecordUserTurn("p-1", 1, "adventure games"),
                    fx.RecordSystemTurn("p-1", 1, "1. Loom", 3.0),
                )
            )
            if not replayed:
                return
            tests = [
                Perturbation("p-1", 1, StressType.ST_4, "adventure games", "advneture games",
                             Source.GENERATED, change="ve → ev"),
                Perturbation("p-1", 1, StressType.ST_9, "adventure games", "=games adventure",
                             Source.AUTHORED),
            ]  # fmt: skip
            first, second = await store.add_stress_tests(tests, Review.ACCEPTED)
            for system in ("v1", "v0"):
                await store.record_replay(
                    Replay(first, system, 1.0, 1_700_000_000.0, ReplyTaken(("1. Loom",)),
                           ReplyTaken(("Sorry?",)), True),
                    Judgement(first, system, Judge.AUTO, Verdict.FAIL, reason="no titles"),
                )  # fmt: skip
            await store.record_replay(
                Replay(second, "v1", 1.0, 1_700_000_100.0, ReplyTaken(("1. Loom",)),
                       ReplyTaken(error="no reply within 10 s"), True)
            )  # fmt: skip
            await store.record_stress_verdict(
                Judgement(second, "v1", Judge.HUMAN, Verdict.PASS, judged_by="ann-3", reason="ok")
            )
            await store.record_stress_verdict(
                Judgement(second, "v1", Judge.LLM, Verdict.FAIL, judged_by="model")
            )

    run_blocking(work)


def test_every_replay_is_a_row_with_its_verdicts_and_judges(tmp_path: Path, capsys) -> None:
    db = tmp_path / "study.sqlite"
    _study(db, replayed=True)
    out = tmp_path / "export"
    assert main(["export", "--db", str(db), "--out", str(out)]) == 0
    rows = pd.read_csv(out / "stress_results.csv", keep_default_na=False, dtype=str)
    assert list(zip(rows["test_id"], rows["system_id"], strict=True)) == [
        ("1", "v0"), ("1", "v1"), ("2", "v1")]  # fmt: skip
    first, _, second = rows.to_dict("records")
    assert (first["stress_type"], first["group"], first["change"]) == ("ST-4", "spelling",
                                                                       "ve → ev")  # fmt: skip
    assert (first["result"], first["verdict_by"]) == ("failed", "replay")
    assert (first["replay_verdict"], first["replay_reason"]) == ("fail", "no titles")
    assert first["person_verdict"] == "" and first["perturbed_reply"] == "Sorry?"
    assert first["replayed_at_iso"] == "2023-11-14T22:13:20Z"
    # a person's verdict counts before the model's; both are kept, with who gave them
    assert (second["result"], second["verdict_by"]) == ("passed", "person")
    assert (second["person_verdict"], second["person_judged_by"]) == ("pass", "ann-3")
    assert (second["model_verdict"], second["model_judged_by"]) == ("fail", "model")
    assert second["perturbed_error"] == "no reply within 10 s" and second["perturbed_reply"] == ""
    assert second["perturbed"] == "'=games adventure"  # a formula, neutralised
    described = pd.read_csv(out / "columns.csv")
    assert "stress_results" in set(described["table"])
    capsys.readouterr()


def test_a_study_without_replays_has_no_stress_file(tmp_path: Path, capsys) -> None:
    db = tmp_path / "study.sqlite"
    _study(db, replayed=False)
    out = tmp_path / "export"
    assert main(["export", "--db", str(db), "--out", str(out)]) == 0
    assert not (out / "stress_results.csv").exists()
    capsys.readouterr()
