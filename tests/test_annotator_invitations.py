"""``ozlab invite --annotators N --job NAME``: annotators get pseudonyms and single-use
``ann-`` codes of their own, never become participants, and find the job's targets built
from the stored conversations and assigned as the job says."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import pytest

from bot.cli import main
from bot.core.annotation import AnnotationState
from bot.core.vocabulary import AnnotationLevel, AnnotatorClaim
from tests.annotation_support import read, stored_study

CUES = [("p0123456789abcde-1", "companion", 3), ("p1123456789abcde-1", "companion", 2)]
XREC = [("p2123456789abcde-1", "shop-v1", 2), ("p3123456789abcde-1", "shop-v0", 3)]


def invite(db: Path, out: Path, *extra: str) -> int:
    return main(["invite", "--db", str(db), "--bot", "lab_bot", "--out", str(out), *extra])


def rows(out: Path) -> list[dict[str, str]]:
    with out.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def state(db: Path, job: str) -> AnnotationState:
    found = read(db, lambda store: store.annotation_state(job))
    assert found is not None
    return found


def test_hri_cues_annotators_each_get_every_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = stored_study(tmp_path / "cues.sqlite", "hri-cues", "hri-cues-chat", CUES)
    out = tmp_path / "annotators.csv"
    assert invite(db, out, "--annotators", "3", "--job", "hri-cues") == 0
    said = capsys.readouterr().out
    assert "3 annotators of job 'hri-cues'" in said and "7 targets (7 new)" in said
    made = rows(out)
    assert len(made) == 3 and len({r["code"] for r in made}) == 3
    for row in made:
        assert row["annotator"].startswith("A-") and row["code"].startswith("ann-")
        assert row["link"] == f"https://t.me/lab_bot?start={row['code']}"
    found = state(db, "hri-cues")
    assert [t.level for t in found.targets].count(AnnotationLevel.SESSION) == 2
    assert Counter(a.annotator for a in found.assignments) == {r["annotator"]: 7 for r in made}
    # annotators are not participants
    live = read(db, lambda store: store.live_participants())
    assert {p.participant_id for p in live} == {"p0123456789abcde", "p1123456789abcde"}
    claim, annotator = read(db, lambda store: store.claim_annotator(made[0]["code"], "c-chat"))
    assert claim is AnnotatorClaim.JOINED and annotator is not None
    assert annotator.annotator_id == made[0]["annotator"]


def test_xrec_annotators_share_the_targets_two_each(tmp_path: Path) -> None:
    db = stored_study(tmp_path / "xrec.sqlite", "xrec", "xrec-recommend", XREC)
    assert invite(db, tmp_path / "a.csv", "--annotators", "3", "--job", "xrec") == 0
    found = state(db, "xrec")
    assert len(found.targets) == 5  # exchanges only
    per_target = Counter((a.target, a.level) for a in found.assignments)
    assert set(per_target.values()) == {2}
    # more conversations later: invited again, the new ones are added and assigned
    more = [("p4123456789abcde-1", "shop-v1", 1)]
    stored_study(db, "xrec", "xrec-recommend", more, definition=False)
    assert invite(db, tmp_path / "b.csv", "--annotators", "1", "--job", "xrec") == 0
    found = state(db, "xrec")
    assert len(found.targets) == 6 and len(found.annotators) == 4
    assert set(Counter((a.target, a.level) for a in found.assignments).values()) == {2}


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["--annotators", "2"], "--annotators needs --job"),
        (["--annotators", "2", "--job", "nope"], "has no annotation job 'nope'"),
        # --annotators 0 is argparse's usage error (status 2): tests/test_cli_stops.py
        (["--n", "2", "--job", "hri-cues"], "--job and --study go with --annotators"),
    ],
)
def test_invite_annotators_refuses_what_it_cannot_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], arguments: list[str], said: str
) -> None:
    db = stored_study(tmp_path / "cues.sqlite", "hri-cues", "hri-cues-chat", CUES)
    assert invite(db, tmp_path / "x.csv", *arguments) == 3
    assert said in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()


def test_a_database_without_a_study_needs_study(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, out = tmp_path / "new.sqlite", tmp_path / "a.csv"
    assert invite(db, out, "--annotators", "2", "--job", "hri-cues") == 3
    assert "--study" in capsys.readouterr().err
    assert invite(db, out, "--annotators", "2", "--job", "hri-cues", "--study", "hri-cues") == 0
    assert len(rows(out)) == 2
