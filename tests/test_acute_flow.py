"""An annotator's way through an ACUTE pair, as the pure flow takes it: both conversations
shown whole with the judged speaker as "Speaker 1" and "Speaker 2" and nothing of which
system spoke, the four forced choices and a justification, then the pair finished; an
annotator below the onboarding threshold is told so, politely."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from bot.core.annotation import AnnotationTarget, AnnotationTask, TranscriptExchange
from bot.core.vocabulary import (
    AnnotationLevel,
    AnnotationRound,
    AnnotatorClaim,
    RaterKind,
    VoteSource,
    Winner,
)
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.annotating.flow import step
from bot.engine.annotating.model import (
    Annotating,
    AnnotatorEffect,
    Claimed,
    FinishTarget,
    RecordRating,
    RecordVotes,
    Reloaded,
    Reopened,
    TargetLoaded,
)
from bot.engine.callbacks import Channel, SurveyTap, TapAction, encode
from scenarios.loading import load_study

HMD = load_study("hmd")
JOB = "hmd-acute"


def conversation(system: str, reply: str) -> tuple[TranscriptExchange, ...]:
    return (TranscriptExchange(1, 1, "An adventure game for Linux?", 1.0, None, reply, 2.0),)


def pair_task(target: str = "S-1~S-2", position: int = 3) -> AnnotationTask:
    return AnnotationTask(
        AnnotationTarget(JOB, target, AnnotationLevel.PAIR, position, "S-1", None, "shop-v1"),
        AnnotationRound.FIRST,
        conversation("shop-v1", "Try Lantern Road."),
        {},
        exchange_number=0,
        exchanges=0,
        conversation_number=2,
        conversations=5,
        second=conversation("shop-v0", "What."),
        second_system="shop-v0",
    )


def texts(effects: Sequence[AnnotatorEffect]) -> list[str]:
    return [e.text for e in effects if isinstance(e, fx.Send | fx.Edit)]


def tap(state: Annotating, index: int, action: TapAction = TapAction.ANSWER) -> ev.ButtonTapped:
    assert state.survey is not None
    return ev.ButtonTapped(encode(SurveyTap(Channel.ANNOTATION, action, state.survey.asked, index)))


def test_a_pair_is_shown_whole_and_answered_with_four_forced_choices() -> None:
    claimed = Claimed(AnnotatorClaim.JOINED, "A-1", JOB, False, pair_task())
    state, effects = step(HMD, None, claimed, 0.0)
    assert state is not None
    said = texts(effects)
    first = next(t for t in said if t.startswith("Pair 2 of 5 · conversation 1 of 2"))
    second = next(t for t in said if t.startswith("Pair 2 of 5 · conversation 2 of 2"))
    assert "Partner: An adventure game for Linux?" in first
    assert "Speaker 1: Try Lantern Road." in first and "Speaker 2: What." in second
    assert not any("shop-v" in t for t in said)  # which system spoke is never shown
    assert said[-1].startswith("Pair 2 of 5\n\nACUTE-Eval · 1/5\n\nWho would you prefer to talk to")
    records: list[AnnotatorEffect] = []
    for choice in (0, 0, 1, 0):
        state, effects = step(HMD, state, tap(state, choice), 0.0)
        assert state is not None
        records += effects
    state, effects = step(HMD, state, tap(state, 0, TapAction.SKIP), 0.0)  # no justification
    assert state is not None
    records += effects
    rated = [(r.item_id, r.value) for r in records if isinstance(r, RecordRating)]
    assert rated == [("acute-eval.engagingness", 1), ("acute-eval.interestingness", 1),
                     ("acute-eval.humanness", 2), ("acute-eval.knowledge", 1)]  # fmt: skip
    assert all(r.level is AnnotationLevel.PAIR for r in records if isinstance(r, RecordRating))
    kept = [r for r in records if isinstance(r, RecordVotes | FinishTarget)]
    assert kept[-1] == FinishTarget("A-1", JOB, "S-1~S-2", AnnotationLevel.PAIR)
    [voted] = [r for r in kept if isinstance(r, RecordVotes)]  # kept with the finish
    assert [(v.question, v.winner) for v in voted.votes] == [
        ("engagingness", Winner.A), ("interestingness", Winner.A), ("humanness", Winner.B),
        ("knowledge", Winner.A),
    ]  # fmt: skip
    vote = voted.votes[0]
    assert (vote.system_a, vote.system_b, vote.session_a, vote.session_b) == (
        "shop-v1", "shop-v0", "S-1", "S-2"
    )  # fmt: skip
    assert (vote.source, vote.rater, vote.rater_kind, vote.session_id) == (
        VoteSource.ACUTE, "A-1", RaterKind.ANNOTATOR, "S-1~S-2"
    )  # fmt: skip
    assert not vote.onboarding and vote.correct() is None
    assert vote.vote_id == "hmd-acute:S-1~S-2:A-1:engagingness"
    assert state.task is None


def test_answers_given_before_a_restart_count_in_the_pairs_votes() -> None:
    """Three choices stored, then the bot restarted: the last one finishes the pair, and
    its votes are all four."""
    stored = {
        "acute-eval.engagingness": "2",
        "acute-eval.interestingness": "2",
        "acute-eval.humanness": "1",
    }
    task = replace(pair_task(), answers=stored)
    state, _ = step(HMD, None, Reloaded("A-1", JOB, False, task), 0.0)
    assert state is not None
    state, _ = step(HMD, state, ev.StartCommand(), 0.0)
    assert state is not None
    state, _ = step(HMD, state, tap(state, 1), 0.0)  # knowledge: speaker 2
    assert state is not None
    _, effects = step(HMD, state, ev.TextReceived("Speaker 2 knew the games."), 0.0)
    [voted] = [e for e in effects if isinstance(e, RecordVotes)]
    assert {v.question: v.winner for v in voted.votes} == {
        "engagingness": Winner.B, "interestingness": Winner.B, "humanness": Winner.A,
        "knowledge": Winner.B,
    }  # fmt: skip


def test_an_onboarding_pairs_votes_carry_the_known_answer() -> None:
    onboarding = AnnotationTask(
        AnnotationTarget(JOB, "onboarding:asks-when-unclear:2", AnnotationLevel.PAIR, 0),
        AnnotationRound.FIRST, (), {}, 0, 0, 1, 7,
    )  # fmt: skip
    state, _ = step(HMD, None, Claimed(AnnotatorClaim.JOINED, "A-1", JOB, False, onboarding), 0)
    assert state is not None
    effects: list[AnnotatorEffect] = []
    for choice in (1, 1, 1, 0):  # speaker 2 (the better one, shown second), then not
        state, said = step(HMD, state, tap(state, choice), 0.0)
        assert state is not None
        effects += said
    _, said = step(HMD, state, tap(state, 0, TapAction.SKIP), 0.0)
    [voted] = [e for e in said if isinstance(e, RecordVotes)]
    assert [v.correct() for v in voted.votes] == [True, True, True, False]
    assert all(v.onboarding and v.expected is Winner.B for v in voted.votes)
    assert (voted.votes[0].system_a, voted.votes[0].system_b) == (
        "onboarding:worse", "onboarding:better"
    )  # fmt: skip


def test_a_pause_and_return_shows_the_pair_once_a_restart_shows_it_again() -> None:
    claimed = Claimed(AnnotatorClaim.JOINED, "A-1", JOB, False, pair_task())
    state, _ = step(HMD, None, claimed, 0.0)
    assert state is not None
    state, _ = step(HMD, state, ev.UnknownCommand("/pause"), 0.0)
    assert state is not None
    _, effects = step(HMD, state, ev.TextReceived("back"), 0.0)
    assert not any("conversation 1 of 2" in t for t in texts(effects))
    assert texts(effects)[-1].startswith("Pair 2 of 5\n\nACUTE-Eval · 1/5\n\nWho would you prefer")
    after_restart = Annotating("A-1", JOB, task=pair_task())
    _, effects = step(HMD, after_restart, ev.StartCommand(), 0.0)
    assert any("conversation 1 of 2" in t for t in texts(effects))


def test_onboarding_pairs_show_the_job_files_conversations() -> None:
    onboarding = AnnotationTask(
        AnnotationTarget(JOB, "onboarding:follows-the-task:2", AnnotationLevel.PAIR, 0),
        AnnotationRound.FIRST, (), {}, 0, 0, 1, 7,
    )  # fmt: skip
    claimed = Claimed(AnnotatorClaim.JOINED, "A-1", JOB, False, onboarding)
    _, effects = step(HMD, None, claimed, 0.0)
    said = texts(effects)
    first = next(t for t in said if "conversation 1 of 2" in t)
    second = next(t for t in said if "conversation 2 of 2" in t)
    assert "Speaker 1: What." in first  # the better one is shown second (":2")
    assert "Speaker 2: I found 2 adventure games for Linux" in second


def test_an_annotator_below_the_threshold_is_told_politely() -> None:
    state = Annotating("A-1", JOB, task=pair_task())
    _, effects = step(HMD, state, TargetLoaded(None, unqualified=True), 0.0)
    [said] = texts(effects)
    assert said.startswith("Thank you for your answers!") and "no more pairs for you" in said
    _, effects = step(HMD, state, TargetLoaded(None), 0.0)
    assert "You have rated everything" in texts(effects)[0]
    claimed = Claimed(AnnotatorClaim.RETURNING, "A-1", JOB, False, None, unqualified=True)
    _, effects = step(HMD, None, claimed, 0.0)
    assert "no more pairs for you" in texts(effects)[-1]


ANSWERED = {
    "acute-eval.engagingness": "1",
    "acute-eval.interestingness": "1",
    "acute-eval.humanness": "1",
    "acute-eval.knowledge": "1",
    "acute-eval.justification": "Speaker 1 was clearer.",
}
"""A pair every item of which was answered: what /back reopens."""


def test_back_on_a_pair_asks_every_question_again_and_its_new_votes_replace_the_old() -> None:
    """/back reopens the last pair with all its answers stored: it is asked again from the
    first question (not finished again at once), and the votes kept with its new finish
    are the new choices, which the store puts in place of the annotator's earlier ones."""
    claimed = Claimed(AnnotatorClaim.JOINED, "A-1", JOB, False, pair_task())
    state, _ = step(HMD, None, claimed, 0.0)
    assert state is not None
    state = replace(state, task=None, survey=None)  # the pair was finished
    state, effects = step(HMD, state, Reopened(replace(pair_task(), answers=ANSWERED)), 1.0)
    assert state is not None and state.task is not None
    assert not [e for e in effects if isinstance(e, FinishTarget | RecordVotes)]
    assert "Who would you prefer to talk to" in texts(effects)[-1]
    records: list[AnnotatorEffect] = []
    for choice in (1, 1, 0, 1):  # speaker 2 this time, but for humanness
        state, effects = step(HMD, state, tap(state, choice), 2.0)
        assert state is not None
        records += effects
    state, effects = step(HMD, state, ev.TextReceived("On reflection, speaker 2."), 2.0)
    records += effects
    rated = {r.item_id: r.value for r in records if isinstance(r, RecordRating)}
    assert rated["acute-eval.engagingness"] == 2 and rated["acute-eval.humanness"] == 1
    [voted] = [r for r in records if isinstance(r, RecordVotes)]
    assert {v.question: v.winner for v in voted.votes} == {
        "engagingness": Winner.B, "interestingness": Winner.B, "humanness": Winner.A,
        "knowledge": Winner.B,
    }  # fmt: skip
    assert records[-1] == FinishTarget("A-1", JOB, "S-1~S-2", AnnotationLevel.PAIR)
    assert state is not None and state.task is None
