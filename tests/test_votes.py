"""The votes frame analytics reads (the contract with the statistics) and ``ozlab import
votes``: a file's votes checked as the bot's (every problem with its line and field),
then kept all or none, and read back in the same frame as the bot's own."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pandas as pd
import pytest

from analytics.data.loading import load_study_data
from analytics.data.selecting import select_study
from analytics.data.votes import VOTE_COLUMNS
from bot.cli import main
from bot.core.vocabulary import FlagReason, RaterKind, Strength, VoteSource, Winner
from bot.core.votes import TURN_QUESTION, Vote
from bot.engine import effects as fx
from bot.store.model import StepCommit
from bot.store.sqlite import open_store
from tests.annotation_support import read, stored_study

ONE = "p0123456789abcde-1"  # with shop-v1
TWO = "pfedcba987654321-1"  # with shop-v0
HEADER = "vote_id,source,rater,system_a,system_b,winner,question"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return stored_study(
        tmp_path / "study.sqlite", "hmd", "hmd-gift", [(ONE, "shop-v1", 2), (TWO, "shop-v0", 1)]
    )


def commit_votes(db: Path, participant: str, *votes: Vote) -> None:
    async def write() -> None:
        store = await open_store(db, lambda: 1_700_000_000.0)
        try:
            records = [fx.RecordVote(vote) for vote in votes]
            await store.commit_step(StepCommit("hmd", participant, "{}", None, None, records))
        finally:
            await store.close()

    asyncio.run(write())


def csv_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "votes.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_votes_frame_has_the_contracts_columns_and_types(db: Path) -> None:
    person = ONE.rsplit("-", 1)[0]
    commit_votes(
        db,
        person,
        Vote(f"{ONE}#1", VoteSource.SIDE_BY_SIDE, person, RaterKind.PARTICIPANT, "shop-v1",
             "shop-v0", Winner.A, TURN_QUESTION, scenario_id="hmd-gift", session_id=ONE, turn=1),
        Vote(f"{ONE}#2", VoteSource.SIDE_BY_SIDE, person, RaterKind.PARTICIPANT, "shop-v1",
             "shop-v0", Winner.B, TURN_QUESTION, scenario_id="hmd-gift", session_id=ONE, turn=2,
             flag_reason=FlagReason.SELF_IDENTIFICATION),
        Vote(f"{ONE}:pref", VoteSource.PREFERENCE, person, RaterKind.PARTICIPANT, "shop-v0",
             "shop-v1", Winner.B, "pref.which", strength=Strength.SLIGHTLY, at=1_600_000_000.0),
        Vote("acute:A1:x", VoteSource.ACUTE, "A1", RaterKind.ANNOTATOR, "shop-v0", "shop-v1",
             Winner.A, "engagingness", session_id="pair-1", session_a=TWO, session_b=ONE,
             onboarding=True, expected=Winner.A, job="acute"),
    )  # fmt: skip

    votes = load_study_data(db).votes

    assert list(votes.columns) == VOTE_COLUMNS
    assert list(votes["vote_id"]) == [f"{ONE}:pref", "acute:A1:x", f"{ONE}#1", f"{ONE}#2"]
    assert list(votes["source"]) == ["preference", "acute", "side_by_side", "side_by_side"]
    assert list(votes["rater_kind"]) == ["participant", "annotator", "participant", "participant"]
    assert list(votes["winner"]) == ["b", "a", "a", "b"]
    assert list(votes["strength"]) == ["slightly", None, None, None]
    assert list(votes["question"]) == ["pref.which", "engagingness", "turn", "turn"]
    assert list(votes["scenario"]) == [None, None, "hmd-gift", "hmd-gift"]
    assert list(votes["session"]) == [None, "pair-1", ONE, ONE]
    assert list(votes["session_a"]) == [None, TWO, None, None]  # the one shown first
    assert list(votes["session_b"]) == [None, ONE, None, None]
    assert votes["turn"].dtype == "Int64" and votes["turn"].tolist()[2:] == [1, 2]
    assert votes["turn"].isna().tolist() == [True, True, False, False]
    assert votes["flagged"].dtype == bool and list(votes["flagged"]) == [0, 0, 0, 1]
    assert list(votes["flag_reason"]) == [None, None, None, "self_identification"]
    assert votes["onboarding"].dtype == bool and list(votes["onboarding"]) == [0, 1, 0, 0]
    assert votes["onboarding_correct"].dtype == "boolean"
    assert votes["onboarding_correct"].tolist() == [pd.NA, True, pd.NA, pd.NA]
    assert isinstance(votes["time"].dtype, pd.DatetimeTZDtype)
    assert str(votes["time"].dtype.tz) == "UTC"
    assert votes["time"].iloc[0] == pd.Timestamp(1_600_000_000, unit="s", tz="UTC")
    assert select_study(load_study_data(db), "hmd").votes.equals(votes)


def test_a_study_without_votes_has_an_empty_frame_with_every_column(db: Path) -> None:
    votes = load_study_data(db).votes
    assert list(votes.columns) == VOTE_COLUMNS and votes.empty
    assert votes["turn"].dtype == "Int64" and votes["flagged"].dtype == bool


def test_imported_votes_join_the_frame_with_their_times(db: Path, tmp_path: Path) -> None:
    file = csv_file(
        tmp_path,
        f"{HEADER},turn,time,strength,session,flagged,flag_reason,onboarding,onboarding_correct\n"
        f"v1,side_by_side,P017,shop-v1,shop-v0,a,turn,3,2024-05-01T10:00:00Z,,,,,,\n"
        f"v2,preference,P017,shop-v0,shop-v1,b,which,,1714557600,much,,,,,\n"
        f"v3,acute,A7,shop-v0,shop-v1,tie,humanness,,,,pair-9,true,self_identification,yes,0\n",
    )
    assert main(["import", "votes", str(file), "--db", str(db), "--dry-run"]) == 0
    assert load_study_data(db).votes.empty
    assert main(["import", "votes", str(file), "--db", str(db)]) == 0

    votes = load_study_data(db).votes.set_index("vote_id")
    assert votes.loc["v1", "time"] == pd.Timestamp("2024-05-01T10:00:00Z")
    assert votes.loc["v1", "turn"] == 3 and votes.loc["v2", "strength"] == "much"
    assert votes.loc["v3", "rater_kind"] == "annotator"  # acute: an annotator by default
    assert votes["flagged"].tolist() == [False, False, True]
    assert votes["onboarding_correct"].tolist() == [pd.NA, pd.NA, False]
    stored = read(db, lambda store: store.votes())
    assert {v.vote_id for _, v in stored} == {"v1", "v2", "v3"}


def test_every_problem_is_told_with_its_line_and_field_and_nothing_is_kept(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = csv_file(
        tmp_path,
        f"{HEADER},session,strength\n"
        "v1,side_by_side,P017,shop-v1,shop-v0,a,turn,,\n"  # right
        "v2,arena,Alice Smith,shop-v1,gpt-9,maybe,turn,,\n"
        f"v3,side_by_side,P018,shop-v1,shop-v1,tie,turn,{ONE},much\n"
        "v1,preference,P017,shop-v1,shop-v0,b,which,,\n",
    )
    assert main(["import", "votes", str(file), "--db", str(db)]) == 3  # StudyDataError
    err = capsys.readouterr().err
    for expected in (
        f"{file}:3: source: 'arena' is not one of side_by_side, preference, acute",
        f"{file}:3: winner: 'maybe' is not one of a, b, tie, both_bad, not_comparable",
        f"{file}:3: rater: 'Alice Smith' does not look like a pseudonym",
        f"{file}:3: system_b: no system 'gpt-9' in this study (shop-v0, shop-v1)",
        f"{file}:4: system_b: the same system as system_a",
        f"{file}:4: session: '{ONE}' belongs to another participant",
        f"{file}:4: strength: only a vote for a or b has a strength",
        f"{file}:5: vote_id: 'v1' is already on line 2",
        "nothing was imported",
    ):
        assert expected in err, expected
    assert read(db, lambda store: store.votes()) == []


def test_a_vote_kept_already_stops_the_whole_file(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = csv_file(tmp_path, f"{HEADER}\nv1,side_by_side,P017,shop-v1,shop-v0,a,turn\n")
    assert main(["import", "votes", str(first), "--db", str(db)]) == 0
    again = csv_file(
        tmp_path,
        f"{HEADER}\nv2,side_by_side,P017,shop-v1,shop-v0,b,turn\n"
        "v1,side_by_side,P017,shop-v1,shop-v0,a,turn\n",
    )
    assert main(["import", "votes", str(again), "--db", str(db)]) == 3
    assert f"{again}:3: vote_id: this vote is already in the database" in capsys.readouterr().err
    assert [v.vote_id for _, v in read(db, lambda store: store.votes())] == ["v1"]


def test_a_models_votes_are_kept_apart_from_peoples_and_named_by_the_judges_id(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A judge's verdict imported without a flag would have counted among people's votes."""
    file = csv_file(
        tmp_path,
        f"{HEADER},rater_kind,flagged\n"
        "m1,side_by_side,gpt-judge,shop-v1,shop-v0,a,turn,model,\n"
        "m2,side_by_side,model:gpt-judge,shop-v0,shop-v1,b,turn,model,true\n",
    )
    assert main(["import", "votes", str(file), "--db", str(db)]) == 0
    votes = load_study_data(db).votes.set_index("vote_id")
    assert votes["flagged"].tolist() == [True, True]
    assert votes.loc["m1", "flag_reason"] == FlagReason.MODEL_VERDICT.value

    refused = csv_file(
        tmp_path,
        f"{HEADER},rater_kind,flagged\n"
        "m3,side_by_side,gpt judge,shop-v1,shop-v0,a,turn,model,false\n",
    )
    assert main(["import", "votes", str(refused), "--db", str(db)]) == 3
    err = capsys.readouterr().err
    assert f"{refused}:2: rater: 'gpt judge' is no judge's id" in err
    assert f"{refused}:2: flagged: a model's vote is never counted among people's" in err
