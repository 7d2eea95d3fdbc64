"""Where each phenomenon applies: the reasons suggest gives, in English and Italian, and
the utterances it leaves alone."""

from __future__ import annotations

import subprocess
import sys

import pytest

from bot.core.errors import StudyDataError
from bot.core.phenomena import StressType
from bot.core.stress import Utterance
from bot.stress.suggest import Suggestion, grouped, suggest

S = StressType


def said(text: str, previous: str = "", turn: int = 1) -> Utterance:
    return Utterance("s-1", turn, text, "shop-v1", "gift", previous_reply=previous)


def reason(text: str, kind: StressType, lang: str, previous: str = "") -> str | None:
    found = suggest([said(text, previous)], [kind], lang)
    assert len(found) <= 1
    return found[0].reason if found else None


def test_anaphora_where_the_system_offered_a_choice_answered_by_name() -> None:
    got = reason("Milan, please", S.ST_10, "en", "Sure. Did you say Rome or Milan?")
    assert got is not None
    assert "'Did you say Rome or Milan?'" in got and "'Milan' (option 2 of 2" in got
    assert "the second" in got
    three = reason("the Linux one", S.ST_10, "en", "For Windows, Mac or Linux?")
    assert three is not None and "option 3 of 3" in three and "the third" in three
    it = reason("Roma", S.ST_10, "it", "Vuoi andare a Roma oppure a Milano?")
    assert it is not None and "'Roma' (option 1 of 2" in it and "il primo" in it
    later = reason("a Milano", S.ST_10, "it", "Vuoi andare a Roma oppure a Milano?")
    assert later is not None and "'a Milano' (option 2 of 2" in later
    # No choice offered, or the participant did not name an option: nothing.
    assert reason("Milan", S.ST_10, "en", "Where do you want to go?") is None
    assert reason("the cheaper one", S.ST_10, "en", "Rome or Milan?") is None
    assert reason("Milan", S.ST_10, "en", "") is None


def test_noun_with_adjective() -> None:
    assert reason("I want a cheap game for Alex", S.ST_9, "en") == (
        "noun with adjective (heuristic: adjective list): 'cheap game'"
    )
    got = reason("Cerco un gioco economico", S.ST_9, "it")
    assert got is not None and "'gioco economico'" in got
    assert reason("It is cheap.", S.ST_9, "en") is None  # no noun after the adjective
    assert reason("Hello there", S.ST_9, "en") is None


def test_proper_nouns_and_entities() -> None:
    got = reason("A game for my friend Alex on Linux", S.ST_7, "en")
    assert got is not None and "'Alex', 'Linux'" in got and "heuristic" in got
    assert reason("Hello. I want a game", S.ST_7, "en") is None  # sentence starts and "I"


def test_transitive_verbs_in_active_voice_only() -> None:
    got = reason("I would like to block the credit card", S.ST_8, "en")
    assert got is not None and "'block the credit'" in got
    assert reason("My card was blocked yesterday", S.ST_8, "en") is None
    got_it = reason("Vorrei prenotare un tavolo", S.ST_8, "it")
    assert got_it is not None and "prenotare un tavolo" in got_it


def test_synonyms_variants_and_modifiers_from_the_shipped_lists() -> None:
    synonym = reason("I need a new home", S.ST_5, "en")
    assert synonym is not None and "home → habitation" in synonym
    variant = reason("Ciao, vorrei un regalo", S.ST_6, "it")
    assert variant is not None and "ciao →" in variant and "vorrei →" in variant
    adverb = reason("Show me only the cheap ones", S.ST_11, "en")
    assert adverb is not None and "'only'" in adverb
    phrases = reason("I want a ticket to Milan for tomorrow", S.ST_11, "en")
    assert phrases is not None  # "tomorrow" is an adverb of the list
    two = reason("Vorrei un biglietto per Milano con il treno", S.ST_11, "it")
    assert two is not None and "'per Milano', 'con il'" in two
    assert reason("Hello", S.ST_11, "en") is None


def test_spelling_types_apply_where_generation_does() -> None:
    got = reason("Is your shop open?", S.ST_1, "en")
    assert got is not None and "your → you're" in got
    swap = reason("Find something", S.ST_4, "en")
    assert swap is not None and "'Find', 'something'" in swap
    assert reason("ok", S.ST_4, "en") is None


def test_suggestions_come_by_type_then_utterance() -> None:
    log = [said("I want a cheap game", turn=1), said("Milan", "Rome or Milan?", turn=2)]
    found = suggest(log, [S.ST_10, S.ST_9], "en")
    assert [(s.stress_type, s.utterance.turn) for s in found] == [(S.ST_10, 2), (S.ST_9, 1)]
    assert all(isinstance(s, Suggestion) for s in found)
    with pytest.raises(StudyDataError):
        suggest(log, [S.ST_9], "de")


def test_the_stress_package_stays_light() -> None:
    """It may run in the bot's process: none of its modules imports pandas or pingouin."""
    script = (
        "import sys\n"
        "import bot.stress.authored, bot.stress.generate, bot.stress.propose, bot.stress.suggest\n"
        "print(sorted({'pandas', 'pingouin', 'matplotlib'} & set(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


def test_near_duplicate_suggestions_are_grouped_by_utterance() -> None:
    typed = [
        Utterance(f"s-{n}", 1, text, system, "gift")
        for n, (text, system) in enumerate(
            [
                ("I want a cheap game", "shop-v1"),
                ("i want a  cheap game", "shop-v0"),
                ("I want a cheap game ", "shop-v1"),
                ("I want a cheap game for Linux", "shop-v1"),
                ("I want a cheap game", "shop-v0"),
            ]
        )
    ]
    groups = grouped(suggest(typed, [S.ST_9], "en"))
    assert [(g.utterance.text, len(g.places)) for g in groups] == [
        ("I want a cheap game", 4),
        ("I want a cheap game for Linux", 1),
    ]
    assert [p.session_id for p in groups[0].places] == ["s-0", "s-1", "s-2", "s-4"]
    assert groups[0].reason == "noun with adjective (heuristic: adjective list): 'cheap game'"
    assert groups[0].where() == (
        "4 times: s-0 turn 1 (shop-v1), s-1 turn 1 (shop-v0), s-2 turn 1 (shop-v1) and 1 more"
    )
    assert groups[1].where() == "s-3 turn 1 (shop-v1)"
