"""Simulated participants: they finish the gift task, vary, replay exactly, and rate sensibly."""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass

import pytest

from bot.simulation import Experience, GiftSeeker
from bot.simulation.policy import parse_items
from bot.systems.base import Conversation, Turn
from bot.systems.demo import ALEX_WISHLIST, CATALOGUE, TASK_SUCCESS, DemoShop

SEEDS = range(20)
ITEMS = ("hmd.understanding", "hmd.management", "hmd.generation", "hmd.usefulness")


@dataclass
class Dialogue:
    messages: list[str]
    replies: list[str]
    success: bool
    added: str | None
    seeker: GiftSeeker


def play(variant: str, seed: int, limit: int = 12) -> Dialogue:
    """Run a seeker against the shop in-process, the way ``ozlab demo`` does through the bot."""
    shop = DemoShop(variant)  # type: ignore[arg-type]
    seeker = GiftSeeker(random.Random(seed))
    history: list[Turn] = []
    texts: list[str] = []
    messages: list[str] = []
    success, added = False, None
    while len(messages) < limit:
        message = seeker.next_message(texts)
        if message is None:
            break
        messages.append(message)
        reply = shop.reply(
            Conversation(f"sim-{seed}", "hmd-gift", "brief", tuple(history), message)
        )
        texts = list(reply.texts)
        history.append(Turn(message, "\n".join(texts)))
        if TASK_SUCCESS in reply.events:
            success = True
            added = next(g.title for g in CATALOGUE if f"added {g.title} to" in texts[0])
            break
    return Dialogue(messages, [t.system for t in history], success, added, seeker)


def good_gift(title: str | None) -> bool:
    game = next((g for g in CATALOGUE if g.title == title), None)
    return (
        game is not None
        and "adventure" in game.genres
        and "linux" in game.platforms
        and game.title not in ALEX_WISHLIST
    )


def test_most_dialogues_succeed_within_ten_exchanges_on_v1() -> None:
    dialogues = [play("v1", seed) for seed in SEEDS]
    won = [d for d in dialogues if d.success and len(d.messages) <= 10]
    assert len(won) >= 18
    assert sum(good_gift(d.added) for d in won) >= 18


def test_dialogues_terminate_on_v0_too() -> None:
    for seed in SEEDS:
        dialogue = play("v0", seed, limit=30)
        assert len(dialogue.messages) <= 10
        if not dialogue.success:
            assert dialogue.seeker.next_message([]) is None


def test_the_seeker_stops_after_success() -> None:
    dialogue = play("v1", 1)
    assert dialogue.success
    assert dialogue.seeker.next_message(["Done! I added Lantern Road to your wishlist."]) is None


def test_same_seed_same_dialogue() -> None:
    for seed in (0, 7, 13):
        first, second = play("v1", seed), play("v1", seed)
        assert first.messages == second.messages
        assert play("v0", seed).messages == play("v0", seed).messages


def test_wording_varies_across_seeds() -> None:
    dialogues = [play("v1", seed) for seed in SEEDS]
    openings = {d.messages[0] for d in dialogues}
    assert len(openings) >= 6
    everything = " ".join(m.lower() for d in dialogues for m in d.messages)
    assert "compare" in everything or "difference" in everything or "better" in everything
    assert "alex's wishlist" in everything


def test_the_seeker_never_uses_the_global_random(monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("module-level random used")

    for name in ("random", "choice", "choices", "randint", "randrange", "sample", "gauss"):
        monkeypatch.setattr(random, name, forbidden)
    dialogue = play("v1", 3)
    seeker = dialogue.seeker
    experience = seeker.experience()
    for item in ITEMS:
        seeker.rate(item, 1, 5, experience)
    seeker.comment(experience)


def test_typos_swap_or_drop_a_letter() -> None:
    seeker = GiftSeeker(random.Random(5), typo_rate=1.0)
    seen = {seeker._typo("show me adventure games on linux") for _ in range(30)}
    assert len(seen) > 3
    for text in seen:
        words = text.split()
        assert len(words) == 6 and words[:2] == ["show", "me"]


def test_a_vague_opening_is_clarified_by_v1_and_guessed_by_v0() -> None:
    vague = [s for s in range(60) if GiftSeeker(random.Random(s)).route == "vague"][:5]
    assert vague
    for seed in vague:
        v1 = play("v1", seed).seeker.experience()
        v0 = play("v0", seed).seeker.experience()
        assert v1.clarifications >= 1 and v1.guesses == 0
        assert v0.guesses >= 1


def test_ratings_stay_on_the_scale_and_prefer_v1() -> None:
    means: dict[str, dict[str, float]] = {}
    for variant in ("v1", "v0"):
        scores: dict[str, list[int]] = {item: [] for item in ITEMS}
        for seed in range(40):
            dialogue = play(variant, seed)
            seeker = dialogue.seeker
            experience = seeker.experience(task_success=dialogue.success)
            assert experience.exchanges == len(dialogue.messages)
            for item in ITEMS:
                value = seeker.rate(item, 1, 5, experience)
                assert 1 <= value <= 5
                scores[item].append(value)
            assert 0 <= seeker.rate("other.scale", 0, 10, experience) <= 10
        means[variant] = {item: statistics.mean(v) for item, v in scores.items()}
    assert means["v1"]["hmd.understanding"] > means["v0"]["hmd.understanding"] + 0.5
    assert means["v1"]["hmd.management"] > means["v0"]["hmd.management"]
    assert means["v1"]["hmd.usefulness"] > means["v0"]["hmd.usefulness"]


def test_bad_experiences_rate_lower_than_good_ones() -> None:
    good = Experience(exchanges=4, task_success=True, clarifications=1)
    bad = Experience(exchanges=10, task_success=False, guesses=2, ignored_constraints=2)
    for item in ITEMS:
        rng_good, rng_bad = GiftSeeker(random.Random(1)), GiftSeeker(random.Random(1))
        good_mean = statistics.mean(rng_good.rate(item, 1, 5, good) for _ in range(200))
        bad_mean = statistics.mean(rng_bad.rate(item, 1, 5, bad) for _ in range(200))
        assert good_mean >= bad_mean


def test_comments_are_sometimes_skipped_and_match_the_experience() -> None:
    seeker = GiftSeeker(random.Random(2))
    bad = Experience(exchanges=10, task_success=False, ignored_constraints=1)
    comments = [seeker.comment(bad) for _ in range(60)]
    assert None in comments
    written = [c for c in comments if c is not None]
    assert written and all(isinstance(c, str) and c.endswith(".") for c in written)
    assert any("Linux" in c or "finish" in c for c in written)


def test_parse_items_reads_lists_and_comparisons() -> None:
    items = parse_items(
        "I found 2 games:\n1. Moss Hollow, €14.99 (Windows, Mac, Linux)\n"
        "2. Hexfield, free (Windows)\nWould you like to know more?"
    )
    assert [(i.number, i.title, i.price, i.linux) for i in items] == [
        (1, "Moss Hollow", 14.99, True),
        (2, "Hexfield", 0.0, False),
    ]
    compared = parse_items("1. Lantern Road: €17.99, adventure, 2020, for Windows and Linux.")
    assert compared[0].title == "Lantern Road" and compared[0].linux


def test_rate_reads_question_texts_as_well_as_item_ids() -> None:
    experience = Experience(exchanges=6, task_success=True, guesses=1)
    questions = {
        "hmd.understanding": "Understanding: When asking the system to search games or "
        "comparing them, did it follow your constraints correctly?",
        "hmd.management": "Management: Did the system ask properly for further information "
        "or clarification when the task was unclear?",
        "hmd.generation": "Generation: Were the system's responses grammatically correct, "
        "polite and concise?",
        "hmd.usefulness": "Usefulness: Would you consider to use the system again in the future?",
    }
    for item, question in questions.items():
        by_id = [GiftSeeker(random.Random(s)).rate(item, 1, 5, experience) for s in range(30)]
        by_text = [GiftSeeker(random.Random(s)).rate(question, 1, 5, experience) for s in range(30)]
        assert by_id == by_text


def test_observe_reads_a_reply_once() -> None:
    seeker = GiftSeeker(random.Random(0))
    assert seeker.next_message([]) is not None
    reply = ["Which game would you like to add to your wishlist? You can tell me its title."]
    seeker.observe(reply)
    seeker.next_message(reply)
    assert seeker.experience().clarifications == 1
    done = ["Done! I added Lantern Road to your wishlist. Is there anything else?"]
    seeker.observe(done)
    assert seeker.succeeded
    assert seeker.next_message(done) is None
