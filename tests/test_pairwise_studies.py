"""The shipped pairwise studies played by simulated participants through the real bot (as
``ozlab demo`` plays them): side by side (``arena``) and within subjects with a preference
item (``within``). Every vote lands in the votes frame, and the votes rank the demo shop's
reference assistant (shop-v1) above its weaker baseline (shop-v0), as the simulation's
strengths say; and the ``preference`` item's answers become votes in the order met."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pandas as pd
import pytest

from analytics.data.loading import load_study_data
from bot.core.vocabulary import AnswerStatus, Moment, RaterKind, Strength, VoteSource, Winner
from bot.core.votes import Vote
from bot.engine import effects as fx
from bot.engine.asking import Survey
from bot.engine.journey import Journey, Stage, Task
from bot.engine.preference import votes
from bot.pilot.demo import play_study
from questionnaires.models import PreferenceItem
from scenarios.loading import load_study

WITHIN = load_study("within")


def winners(frame: pd.DataFrame) -> pd.Series:
    """How many decided votes each system won."""
    decided = frame[frame["winner"].isin(["a", "b"]) & ~frame["flagged"]]
    won = decided["system_a"].where(decided["winner"] == "a", decided["system_b"])
    return won.value_counts()


def test_the_preference_items_choices_in_the_order_met() -> None:
    forced = PreferenceItem(type="preference", id="p.x", text="Which?")
    assert forced.choices() == [(1, "The first assistant"), (2, "The second assistant")]
    graded = PreferenceItem(type="preference", id="p.y", text="Which?", strength=True)
    assert [label for _, label in graded.choices()] == [
        "The first assistant, much better", "The first assistant, slightly better",
        "No preference", "The second assistant, slightly better",
        "The second assistant, much better",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("value", "winner", "strength"),
    [(1, Winner.A, Strength.MUCH), (2, Winner.A, Strength.SLIGHTLY), (3, Winner.TIE, None),
     (4, Winner.B, Strength.SLIGHTLY), (5, Winner.B, Strength.MUCH)],
)  # fmt: skip
def test_an_answered_preference_is_a_vote_between_the_systems_met_in_that_order(
    value: int, winner: Winner, strength: Strength | None
) -> None:
    tasks = (Task("hmd-gift", "shop-v0"), Task("idial-wishlist", "shop-v1"))
    journey = Journey("p1", Stage.QUESTIONNAIRE, 0.0, 0.0, tasks=tasks, task_index=1)
    survey = Survey(Moment.POST_STUDY, None, ("preference",), "1")
    answer = fx.RecordResponse(
        None, "preference", "preference.overall", value, "words", None, AnswerStatus.ANSWERED,
        1.0, Moment.POST_STUDY,
    )  # fmt: skip
    (vote,) = votes(WITHIN, journey, survey, [answer])
    assert vote == fx.RecordVote(
        Vote(
            "p1-study:preference.overall", VoteSource.PREFERENCE, "p1", RaterKind.PARTICIPANT,
            "shop-v0", "shop-v1", winner, "preference.overall", strength=strength,
        )
    )  # fmt: skip
    skipped = fx.RecordResponse(
        None, "preference", "preference.overall", None, None, None, AnswerStatus.SKIPPED,
        1.0, Moment.POST_STUDY,
    )  # fmt: skip
    assert votes(WITHIN, journey, survey, [skipped]) == []
    one_system = Journey("p2", Stage.QUESTIONNAIRE, 0.0, 0.0, tasks=tasks[:1])
    assert votes(WITHIN, one_system, survey, [answer]) == []  # nothing to compare


@pytest.mark.slow
@pytest.mark.parametrize(("study", "per_person"), [("arena", 5), ("within", 1)])
def test_a_shipped_pairwise_study_plays_and_ranks_the_reference_assistant_first(
    tmp_path: Path, study: str, per_person: int
) -> None:
    db = tmp_path / f"{study}.sqlite"
    played = asyncio.run(play_study(load_study(study), db, participants=12, seed=3))
    assert all(p.finished for p in played)

    frame = load_study_data(db).votes
    assert len(frame) == 12 * per_person
    assert set(frame["rater"]) == set(load_study_data(db).participants["participant_id"])
    assert set(frame["system_a"]) == set(frame["system_b"]) == {"shop-v0", "shop-v1"}
    won = winners(frame)
    assert won["shop-v1"] > won["shop-v0"]
