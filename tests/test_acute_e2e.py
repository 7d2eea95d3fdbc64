"""ACUTE-Eval through the real bot and the emulator: simulated participants (``ozlab
demo``'s players) play the HMD study with both shop assistants, then three annotators
invited to its hmd-acute job compare pairs of their conversations in Telegram. The one who
misses the onboarding pairs' known answers is told so and gets no real pair; the others
share every real pair, none seeing a conversation twice; every choice is a vote."""

from __future__ import annotations

import asyncio
import csv
import json
from collections import Counter
from pathlib import Path

import pytest

import scenarios
from analytics.data.loading import load_study_data
from bot.core.vocabulary import AnnotationLevel
from bot.engine.annotating.pairs import pair_sessions
from bot.pilot.emulator import BotApiEmulator, BotMessage, Participant
from scenarios.loading import load_study
from tests.annotating_support import ALL_DONE, current_item, invite, json_report, play, stored
from tests.command_line import ozlab_here
from tests.conftest import StartBot
from tests.store_reads import tables

pytestmark = pytest.mark.slow

BETTER = ("I found 2 adventure games for Linux", "Which game would you like to add?")
"""Lines only the better conversation of each onboarding pair has."""
UNQUALIFIED = "no more pairs for you"


def _finished(p: Participant) -> bool:
    last = p.messages[-1] if p.messages else None
    return last is not None and (ALL_DONE in last.text or UNQUALIFIED in last.text)


def _better_side(p: Participant) -> int:
    """Which speaker is better in the pair on screen: known for onboarding pairs, else the
    first (an annotator who always prefers what was shown first)."""
    shown = [m.text for m in p.messages if "conversation 2 of 2" in m.text]
    last = shown[-1] if shown else ""
    return 2 if any(line in last for line in BETTER) else 1


def _label(message: BotMessage, side: int) -> str | None:
    """The button of the option naming Speaker ``side`` (None: a text item, typed)."""
    buttons = [t for row in message.keyboard for t, d in row if d and d[1:2] == "a"]
    if not buttons:
        return None
    assert f"{side} = " in message.text and f"Speaker {side}" in message.text
    return str(side)


async def _compare_all(p: Participant, *, knows: bool) -> None:
    """Answer every pair: with the known answer (``knows``) or always against it."""
    while True:
        await p.wait_for(lambda q: current_item(q) is not None or _finished(q), timeout=30)
        message = current_item(p)
        if message is None:
            return
        count = len(p.messages)
        before = [d for row in message.keyboard for _, d in row]
        side = _better_side(p)
        label = _label(message, side if knows else 3 - side)
        if label is None:
            await p.send_text("Clearer and more helpful.")
        else:
            await p.tap(text=label, message_id=message.message_id)

        def moved(
            q: Participant, m: BotMessage = message, n: int = count, was: list[str] = before
        ) -> bool:
            return [d for row in m.keyboard for _, d in row] != was or len(q.messages) > n

        await p.wait_for(moved, timeout=30)


async def test_annotators_compare_hmd_conversations_with_acute_eval(
    emulator: BotApiEmulator, start_bot: StartBot, tmp_path: Path
) -> None:
    bundle = load_study("hmd")
    db = tmp_path / "hmd.sqlite"
    await start_bot(bundle, db=db)
    await play(emulator, bundle, participants=4)
    codes = await invite(db, "hmd-acute", 3)
    annotators = [emulator.participant(7100 + i, first_name=f"Ann{i}") for i in range(3)]
    for p, (_, code), knows in zip(annotators, codes, (True, False, True), strict=True):
        await p.send_text(f"/start {code}")
        await p.wait_for_text("read pairs of conversations", timeout=20)
        await _compare_all(p, knows=knows)

    good, bad, other = (pseudonym for pseudonym, _ in codes)
    assert UNQUALIFIED in annotators[1].messages[-1].text
    assert ALL_DONE in annotators[0].messages[-1].text
    ratings = await stored(db, lambda s: s.annotation_ratings())
    targets = await stored(db, lambda s: s.annotation_targets("hmd-acute"))
    sessions = {
        s.session_id: s.system for s in await stored(db, lambda s: s.annotatable_sessions())
    }
    real = [t for t in targets if pair_sessions(t.target)]
    assert len(real) == 4 and all(t.level is AnnotationLevel.PAIR for t in targets)
    for t in real:  # one conversation of each assistant, in the side order drawn
        first, second = pair_sessions(t.target) or ("", "")
        assert {sessions[first], sessions[second]} == {"shop-v1", "shop-v0"}
    choices = [r for r in ratings if not r.item_id.endswith("justification")]
    by_pair = Counter(r.target for r in choices if pair_sessions(r.target))
    assert by_pair == {t.target: 4 for t in real}  # every real pair, once, four questions
    raters = {r.annotator for r in choices if pair_sessions(r.target)}
    assert raters == {good, other}  # never the one below the threshold
    assert not [r for r in ratings if r.annotator == bad and pair_sessions(r.target)]
    for who in (good, other):
        seen = [s for r in choices if r.annotator == who and r.item_id.endswith("engagingness")
                for s in pair_sessions(r.target) or ()]  # fmt: skip
        assert seen and len(seen) == len(set(seen))  # no conversation twice
    typed = {r.value for r in ratings if r.item_id.endswith("justification")}
    assert typed == {"Clearer and more helpful."}

    # every forced choice is a vote of the votes frame, as the statistics read it
    frame = await asyncio.to_thread(load_study_data, db)
    votes = frame.votes
    assert set(votes["source"]) == {"acute"} and set(votes["rater_kind"]) == {"annotator"}
    assert set(frame.vote_studies) == {"hmd"}
    real_votes = votes[~votes["onboarding"]]
    assert len(real_votes) == 16  # four pairs, four questions
    assert set(real_votes["question"]) == {
        "engagingness", "interestingness", "humanness", "knowledge"
    }  # fmt: skip
    for t in real:
        shown = real_votes[real_votes["session"] == t.target]
        [(first, second)] = set(zip(shown["session_a"], shown["session_b"], strict=True))
        assert {first, second} == set(pair_sessions(t.target) or ())  # on its annotator's side
        assert set(shown["system_a"]) == {sessions[first]}  # the system shown first
        assert set(shown["system_b"]) == {sessions[second]}
        assert set(shown["winner"]) == {"a"}  # these annotators prefer what they saw first
        assert shown["onboarding_correct"].isna().all()
    onboarding = votes[votes["onboarding"]]
    assert len(onboarding) == 3 * 2 * 4  # everyone, both known pairs, four questions
    correct = onboarding.groupby("rater")["onboarding_correct"].all().to_dict()
    assert correct == {good: True, bad: False, other: True}
    assert not set(onboarding["system_a"]) & {"shop-v1", "shop-v0"}

    # forced choices are comparisons, not ratings: no agreement statistics over them
    report = await json_report(db, tmp_path / "report.json")
    assert not [r for r in report["reliability"] if r["job"] == "hmd-acute"]
    assert frame.annotations.empty


async def test_an_adaptive_job_draws_each_next_pair_after_the_votes(
    emulator: BotApiEmulator, start_bot: StartBot, tmp_path: Path
) -> None:
    """Adaptive selection through the real bot: one open pair at a time per pair of systems,
    the next drawn (and stored) once the annotator voted, up to the job's budget."""
    shipped = load_study("hmd")
    job = shipped.jobs["hmd-acute"]
    adaptive = job.pairing.model_copy(
        update={"selection": "adaptive", "pairs_per_system_pair": 3, "onboarding": None}
    )
    jobs = {**shipped.jobs, "hmd-acute": job.model_copy(update={"pairwise": adaptive})}
    bundle = shipped.model_copy(update={"jobs": jobs})
    db = tmp_path / "adaptive.sqlite"
    await start_bot(bundle, db=db)
    await play(emulator, bundle, participants=6)
    [(_, code)] = await invite(db, "hmd-acute", 1)
    before = await stored(db, lambda s: s.annotation_targets("hmd-acute"))
    assert len(before) == 1  # one pair of systems: one open pair at a time
    p = emulator.participant(7200, first_name="Ann")
    await p.send_text(f"/start {code}")
    await _compare_all(p, knows=True)
    after = await stored(db, lambda s: s.annotation_targets("hmd-acute"))
    assert len(after) == 3 and after[0] == before[0]  # drawn one by one, up to the budget
    seen = [s for t in after for s in pair_sessions(t.target) or ()]
    assert len(seen) == len(set(seen))  # one annotator: never a conversation twice
    votes = (await asyncio.to_thread(load_study_data, db)).votes
    assert len(votes) == 3 * 4 and not votes["onboarding"].any()


DUEL = """\
id: duel
title: Which assistant?
kind: pairwise
rate:
  pair: [acute-eval]
annotators: 2
pairwise:
  speaker: system
  same_scenario: true
  pairs_per_system_pair: 18
  pairs_per_annotator: 6
seen_once_in_order: true
brief:
  guidelines: Read both conversations.
"""


def test_every_annotator_is_shown_each_assistant_first_equally_often(tmp_path: Path) -> None:
    """Six simulated annotators (``ozlab demo``'s: they prefer a system, never a side) share
    18 pairs of the HMD logs, two to a pair and six pairs each, joining one after another,
    through the real bot on the emulator. Each is shown each assistant first 3 times (a
    side fixed per pair showed half of them one assistant first 4 times of 6), a pair's two
    annotators see it both ways, the report finds no position effect, and the export says
    which conversation each annotator was shown first."""
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "duel.yaml").write_text(DUEL)
    hmd = Path(scenarios.__file__).parent / "library" / "studies" / "hmd.yaml"
    study = tmp_path / "study.yaml"
    study.write_text(
        hmd.read_text().replace("annotation_jobs: [hmd-acute]", "annotation_jobs: [duel]")
    )
    db = tmp_path / "duel.sqlite"
    done = ozlab_here("demo", "--study", study, "-n", "16", "--annotators", "6", "--db", db)
    assert done.returncode == 0, done.stderr

    system_of = {r["session_id"]: r["system_id"] for r in tables(db)["sessions"]}
    votes = load_study_data(db).votes
    real = votes[(votes["source"] == "acute") & ~votes["onboarding"]]
    assert len(real) == 18 * 2 * 4  # every pair, two annotators, four questions
    for row in real.to_dict("records"):  # the side shown, said by the vote itself
        assert {row["session_a"], row["session_b"]} == set(pair_sessions(row["session"]) or ())
        assert (system_of[row["session_a"]], system_of[row["session_b"]]) == (
            row["system_a"], row["system_b"]
        )  # fmt: skip
    shown = real[real["question"] == "engagingness"]
    firsts = Counter(zip(shown["rater"], shown["system_a"], strict=True))
    assert sorted(firsts.values()) == [3] * 12  # six annotators, each assistant 3 times of 6
    sides = shown.groupby("session")["session_a"].nunique()
    assert len(sides) == 18 and (sides == 2).sum() >= 12  # most pairs seen both ways

    report = json.loads(_report(db, tmp_path / "report.json"))
    position = [p for p in report["pairwise"]["parameters"] if p["parameter"] == "shown_first"]
    assert {p["question"] for p in position} == {
        "engagingness", "interestingness", "humanness", "knowledge"
    }  # fmt: skip
    for p in position:  # of two equal assistants, the one shown first preferred: about half
        assert 0.35 <= p["probability"] <= 0.65, p
        assert p["probability_low"] <= 0.5 <= p["probability_high"], p

    out = tmp_path / "export"
    assert ozlab_here("export", "--db", db, "--out", out).returncode == 0
    with (out / "votes.csv").open(newline="") as exported:
        rows = [r for r in csv.DictReader(exported) if r["source"] == "acute"]
    sides_of = zip(real["vote_id"], real["session_a"], real["session_b"], strict=True)
    assert {r["vote_id"]: (r["session_a"], r["session_b"]) for r in rows} == {
        vote: (a, b) for vote, a, b in sides_of
    }


def _report(db: Path, out: Path) -> str:
    done = ozlab_here("report", "--db", db, "--format", "json", "--out", out)
    assert done.returncode == 0, done.stderr
    return out.read_text("utf-8")
