"""ST-1 to ST-4 generated offline: fixed English and Italian examples, the one-change
property over many random utterances, reproducibility and the spread of ``per_type``."""

from __future__ import annotations

import random
import subprocess
import sys
import unicodedata
from itertools import pairwise

import pytest

from bot.core.errors import OzlabError, StudyDataError
from bot.core.phenomena import Group, StressType, UnknownStressType, parse_types
from bot.core.stress import Perturbation, Source, Utterance
from bot.stress.edits import replaced, swapped
from bot.stress.generate import GENERATED_TYPES, generate
from bot.stress.lexicon import confusions, lexicon
from bot.stress.tokens import plain, words

ST1, ST2, ST3, ST4 = StressType.ST_1, StressType.ST_2, StressType.ST_3, StressType.ST_4


def said(text: str, session: str = "s-1", turn: int = 1, system: str = "shop-v1") -> Utterance:
    return Utterance(session, turn, text, system, "gift")


def one(text: str, kind: StressType, lang: str, seed: int = 1) -> Perturbation:
    made = generate([said(text)], [kind], lang, seed, per_type=10)
    assert len(made) == 1, made
    assert made[0].source is Source.GENERATED and made[0].original == text
    return made[0]


# --- the phenomena ----------------------------------------------------------------------


def test_types_parse_and_know_their_group_and_title() -> None:
    assert parse_types("ST-1, st-10,ST-1") == [StressType.ST_1, StressType.ST_10]
    assert StressType.ST_4.group is Group.SPELLING and StressType.ST_4.title == "character swapping"
    assert StressType.ST_6.group is Group.LEXICAL
    assert (
        StressType.ST_10.group is Group.SYNTACTIC
        and StressType.ST_10.title == "anaphora resolution"
    )
    assert sum(t.group is Group.SYNTACTIC for t in StressType) == 4
    with pytest.raises(UnknownStressType, match="'ST-12'") as caught:
        parse_types("ST-1,ST-12")
    assert isinstance(caught.value, OzlabError) and isinstance(caught.value, ValueError)
    with pytest.raises(UnknownStressType):
        parse_types(" , ")


# --- fixed examples, English and Italian (the "Done when") ------------------------


@pytest.mark.parametrize(
    ("lang", "kind", "text", "perturbed", "change"),
    [
        ("en", ST1, "Is your shop open?", "Is you're shop open?", "your → you're"),
        ("en", ST1, "Their price is fine", "There price is fine", None),
        ("it", ST1, "Lui ha fame", "Lui a fame", "ha → a"),
        ("it", ST1, "Mettilo a fianco!", "Mettilo affianco!", "a fianco → affianco"),
        ("en", ST2, "I definitely want it.", "I definately want it.", "definitely → definately"),
        ("en", ST2, "Can you recommend one?", "Can you reccomend one?", None),
        ("it", ST2, "Perché costa tanto?", "Perchè costa tanto?", "Perché → Perchè"),
        ("it", ST2, "Qual è il prezzo?", "Qual'è il prezzo?", "Qual è → Qual'è"),
        ("it", ST2, "Costa un po' troppo", "Costa un pò troppo", "po' → pò"),
        ("en", ST3, "I don't know", "I dont know", "don't → dont"),
        ("en", ST3, "I don’t know", "I dont know", "don’t → dont"),
        ("it", ST3, "Lui dà una mano", "Lui da una mano", "dà → da"),
        ("it", ST3, "Vivo in città", "Vivo in citta", "città → citta"),
        ("it", ST3, "Aspetta un po'", "Aspetta un po", "po' → po"),
        ("en", ST4, "ok, sure", "ok, srue", "sure → srue"),
        ("it", ST4, "sì, bene", "sì, bnee", "bene → bnee"),
    ],
)
def test_fixed_examples(
    lang: str, kind: StressType, text: str, perturbed: str, change: str | None
) -> None:
    made = one(text, kind, lang)
    assert made.perturbed == perturbed
    assert made.stress_type is kind
    if change is not None:
        assert made.change == change


def test_the_protocols_own_examples_are_among_the_swaps() -> None:
    assert "therefroe" in {e.new for e in swapped("therefore", "en")}
    assert "casuamlente" in {e.new for e in swapped("casualmente", "it")}
    assert {e.new for e in replaced("perché", "it")} == {"perche"}


@pytest.mark.parametrize(
    ("lang", "kind", "text"),
    [
        ("en", ST1, "Show me an adventure game"),  # no confusable word
        ("it", ST2, "Cerco un gioco"),  # no listed misspelling: nothing invented
        ("en", ST3, "No apostrophes nor accents here"),
        ("en", ST4, "ok, I am in, cool"),  # words too short, or "cool": swapping o/o is no change
        ("en", ST4, "see https://example.com/adventure or www.games.org 12345 ps5 @shopbot"),
    ],
)
def test_an_utterance_where_the_type_does_not_apply_gives_nothing(
    lang: str, kind: StressType, text: str
) -> None:
    assert generate([said(text)], [kind], lang, 1, 5) == []


def test_case_and_the_participants_apostrophe_are_kept() -> None:
    assert one("THEIR GAME", ST1, "en").perturbed in ("THERE GAME", "THEY'RE GAME")
    assert one("It’s fine", ST1, "en").perturbed == "Its fine"
    assert one("its price", ST1, "en").perturbed == "it's price"
    assert one("Its price", ST1, "en").perturbed == "It's price"


# --- the property: one token changed, in the way the type says ------------------------------

_POOL_TEXT = {
    "en": (
        "their there they're your you're its it's then than to too lose loose definitely "
        "recommend something really tomorrow because don't can't I'm that's café game Linux "
        "cheap adventure friend wishlist please thanks Alex platform windows shop buy by"
    ),
    "it": (
        "perché qual è un po' altro un altro a ha e è o ho anno hanno ce c'è li lì da dà ne né "
        "città più così l'amico gioco economico Linux regalo proprio sufficiente qui va sta fa "
        "cerco vorrei casualmente avventura"
    ),
}
_POOL = {lang: text.split() for lang, text in _POOL_TEXT.items()}
_NOISE = [
    "https://shop.example.com/x?a=1",
    "ps5",
    "2024",
    "10€",
    "@bot",
    "#tag",
    "😀",
    ",",
    "!",
    "?",
]


def _random_text(rng: random.Random, lang: str) -> str:
    parts = [rng.choice(_POOL[lang] + _NOISE) for _ in range(rng.randint(1, 14))]
    text = ""
    for part in parts:
        text += part if part in ",!?" else (" " if text else "") + part
    return text[:1].upper() + text[1:] if rng.random() < 0.5 else text


def _listed_expression(unit: str, lang: str) -> bool:
    return plain(unit) in confusions(lang) or plain(unit) in lexicon(lang).misspelled


def _changed_span(original: str, perturbed: str, lang: str = "it") -> tuple[str, str]:
    """The original's word (or listed two-word expression) the difference falls in, and
    what it became; asserts the difference falls in one such unit."""
    prefix = 0
    while prefix < min(len(original), len(perturbed)) and original[prefix] == perturbed[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < min(len(original), len(perturbed)) - prefix
        and original[-1 - suffix] == perturbed[-1 - suffix]
    ):
        suffix += 1
    lo, hi = prefix, len(original) - suffix
    ws = words(original, "it")  # the Italian tokenizer also knows "po'"
    units = [(w.start, w.end) for w in ws]
    units += [
        (a.start, b.end)
        for a, b in pairwise(ws)
        if original[a.end : b.start] == " " and _listed_expression(original[a.start : b.end], lang)
    ]
    fitting = [(s, e) for s, e in sorted(units, key=lambda u: u[1] - u[0]) if s <= lo and hi <= e]
    assert fitting, f"the change {original!r} → {perturbed!r} is not inside one word"
    start, end = fitting[0]
    delta = len(perturbed) - len(original)
    return original[start:end], perturbed[start : end + delta]


def _strip_one_accent(old: str, new: str) -> bool:
    if len(old) != len(new):
        return False
    diffs = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
    if len(diffs) != 1:
        return False
    base = unicodedata.normalize("NFD", old[diffs[0]])[0]
    return new[diffs[0]] == base


def _check(kind: StressType, lang: str, old: str, new: str) -> None:
    if kind is ST1:
        assert plain(new) in confusions(lang)[plain(old)], (old, new)
    elif kind is ST2:
        assert lexicon(lang).misspelled[plain(old)] == plain(new), (old, new)
    elif kind is ST3:
        dropped = any(old[:i] + old[i + 1 :] == new for i, c in enumerate(old) if c in "'’")
        assert dropped or _strip_one_accent(old, new), (old, new)
    else:
        assert len(old) == len(new) >= 4 and old[0] == new[0] and old[-1] == new[-1]
        diffs = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
        assert len(diffs) == 2 and diffs[1] == diffs[0] + 1, (old, new)
        assert (old[diffs[0]], old[diffs[1]]) == (new[diffs[1]], new[diffs[0]])
        assert old.isalpha()


@pytest.mark.parametrize("lang", ["en", "it"])
def test_each_perturbation_changes_one_token_the_way_its_type_says(lang: str) -> None:
    rng = random.Random(2018)
    utterances = [said(_random_text(rng, lang), f"s-{i}", 1) for i in range(600)]
    made = generate(utterances, sorted(GENERATED_TYPES), lang, seed=5, per_type=10_000)
    by_type = {kind: [p for p in made if p.stress_type is kind] for kind in GENERATED_TYPES}
    assert all(len(found) > 50 for found in by_type.values()), {
        k.value: len(v) for k, v in by_type.items()
    }
    for p in made:
        assert p.perturbed != p.original
        old, new = _changed_span(p.original, p.perturbed, lang)
        _check(p.stress_type, lang, old, new)
        assert p.change == f"{old} → {new}"
        for noise in _NOISE[:6]:  # URLs, numbers, names and tags are never touched
            assert p.original.count(noise) == p.perturbed.count(noise)


# --- reproducible, capped and spread -----------------------------------------------------


def _shop_log() -> list[Utterance]:
    texts = [
        "I'm looking for their best adventure game",
        "Do you recommend something for Linux? It's for a friend",
        "That's great, definitely add it to the wishlist",
        "Is your cheapest game any good? I can't spend too much",
    ]
    return [
        said(text, f"{system}-{session}", turn, system)
        for system in ("shop-v0", "shop-v1")
        for session in range(3)
        for turn, text in enumerate(texts, start=1)
    ]


def test_same_input_and_seed_give_the_same_tests_and_another_seed_others() -> None:
    log = _shop_log()
    types = sorted(GENERATED_TYPES)
    first = generate(log, types, "en", seed=42, per_type=6)
    assert first == generate(list(log), types, "en", seed=42, per_type=6)
    assert first != generate(log, types, "en", seed=43, per_type=6)
    # One utterance's test does not depend on which others come with it.
    alone = generate([log[5]], [ST4], "en", seed=42, per_type=1)
    together = [p for p in generate(log, [ST4], "en", 42, 100) if p.session_id == log[5].session_id]
    assert alone[0] in together


def test_the_same_tests_in_another_process_with_another_hash_seed() -> None:
    script = (
        "from tests.test_stress_generate import _shop_log\n"
        "from bot.stress.generate import generate, GENERATED_TYPES\n"
        "for p in generate(_shop_log(), sorted(GENERATED_TYPES), 'en', 42, 6):\n"
        "    print(p.session_id, p.turn, p.stress_type.value, p.perturbed)\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PYTHONPATH": "."},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1
    here = generate(_shop_log(), sorted(GENERATED_TYPES), "en", 42, 6)
    assert outputs.pop().splitlines()[0] == " ".join(
        [here[0].session_id, str(here[0].turn), here[0].stress_type.value, here[0].perturbed]
    )


def test_per_type_caps_each_type_and_spreads_over_systems_and_sessions() -> None:
    made = generate(_shop_log(), [ST3, ST4], "en", seed=7, per_type=6)
    for kind in (ST3, ST4):
        tests = [p for p in made if p.stress_type is kind]
        assert len(tests) == 6
        systems = [p.session_id.rsplit("-", 1)[0] for p in tests]
        assert systems.count("shop-v0") == systems.count("shop-v1") == 3
        assert len({p.session_id for p in tests}) == 6  # a session again only when all had one
    assert generate(_shop_log(), [ST3], "en", seed=7, per_type=0) == []


def test_types_not_generated_offline_and_unknown_languages_are_refused() -> None:
    with pytest.raises(StudyDataError, match="ST-9 cannot be generated offline"):
        generate(_shop_log(), [ST1, StressType.ST_9], "en", 1, 1)
    with pytest.raises(StudyDataError, match="'fr'"):
        generate(_shop_log(), [ST1], "fr", 1, 1)
    with pytest.raises(StudyDataError):
        generate(_shop_log(), [ST1], "en", 1, -1)


def test_an_utterance_listed_twice_is_tested_once() -> None:
    log = _shop_log()[:1] * 3
    assert len(generate(log, [ST3], "en", 1, 10)) == 1


@pytest.mark.parametrize("lang", ["en", "it"])
def test_the_shipped_misspellings_are_not_real_words_of_the_lists(lang: str) -> None:
    """A "misspelling" that is a listed correct word or a confusable (lose → loose) would
    be an ST-1 test counted as ST-2."""
    lists = lexicon(lang)
    real = set(lists.misspelled) | set(confusions(lang))
    assert not {wrong for wrong in lists.misspelled.values() if wrong in real}
    assert len(lists.misspelled) >= 30 and len(lists.confused) >= 15
