"""ST-1 to ST-4 made offline from the shipped word lists and rules, seeded and reproducible.

Each utterance gets at most one perturbation per type, one span changed by one phenomenon
(see :mod:`bot.stress.edits`); an utterance where the type does not apply gets none.

Reproducible: the random choices for one utterance come from ``random.Random`` seeded with
a SHA-256 of (seed, type, session, turn), never from ``hash()`` (salted per process) nor
from a shared generator, so the same utterance with the same seed always gets the same
perturbation, whatever other utterances come with it.

Spread: ``per_type`` caps each type; the tests are dealt round-robin over the systems, and
within a system over its sessions (in a seeded order), so that no system or session takes
all of them.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence

from bot.core.errors import StudyDataError
from bot.core.phenomena import StressType
from bot.core.stress import Perturbation, Source, Utterance
from bot.stress.edits import EDITORS, Edit
from bot.stress.lexicon import check_language

GENERATED_TYPES: frozenset[StressType] = frozenset(
    {StressType.ST_1, StressType.ST_2, StressType.ST_3, StressType.ST_4}
)


def stable_key(*parts: object) -> int:
    """A 64-bit number of ``parts``, the same in every process and on every machine."""
    joined = "\x1f".join(str(part) for part in parts).encode("utf-8")
    return int.from_bytes(hashlib.sha256(joined).digest()[:8], "big")


def candidates(utterance: Utterance, stress_type: StressType, lang: str) -> list[Edit]:
    """Every edit of ``stress_type`` that ``utterance`` allows (none: it does not apply)."""
    return EDITORS[stress_type](utterance.text, lang)


def pick(edits: Sequence[Edit], rng: random.Random) -> Edit:
    """A word first, then one of its edits: long words must not win just for having more
    letters to swap."""
    by_word: dict[int, list[Edit]] = {}
    for edit in edits:
        by_word.setdefault(edit.word, []).append(edit)
    word = rng.choice(sorted(by_word))
    return rng.choice(by_word[word])


def perturb(
    utterance: Utterance, stress_type: StressType, lang: str, seed: int
) -> Perturbation | None:
    """The one perturbation of ``utterance`` by ``stress_type`` for ``seed``, or None."""
    edits = candidates(utterance, stress_type, lang)
    if not edits:
        return None
    rng = random.Random(stable_key(seed, stress_type.value, utterance.session_id, utterance.turn))
    edit = pick(edits, rng)
    return Perturbation(
        session_id=utterance.session_id,
        turn=utterance.turn,
        stress_type=stress_type,
        original=utterance.text,
        perturbed=edit.apply(utterance.text),
        source=Source.GENERATED,
        change=edit.change,
    )


def spread(
    utterances: Sequence[Utterance], stress_type: StressType, seed: int, limit: int
) -> list[Utterance]:
    """At most ``limit`` utterances, dealt round-robin over systems, then over sessions."""

    def order(*parts: object) -> int:
        return stable_key(seed, stress_type.value, *parts)

    systems: dict[str, dict[str, list[Utterance]]] = {}
    for u in utterances:
        systems.setdefault(u.system, {}).setdefault(u.session_id, []).append(u)
    queues: list[list[Utterance]] = []
    for system in sorted(systems):
        sessions = sorted(systems[system].items(), key=lambda item: order(item[0]))
        turns = [sorted(us, key=lambda u: order(u.session_id, u.turn)) for _, us in sessions]
        queues.append(_interleave(turns))
    return _interleave(queues)[:limit]


def _interleave(queues: list[list[Utterance]]) -> list[Utterance]:
    """The first of each queue, then the second of each, and so on."""
    dealt: list[Utterance] = []
    longest = max((len(q) for q in queues), default=0)
    for rank in range(longest):
        dealt.extend(q[rank] for q in queues if rank < len(q))
    return dealt


def generate(
    utterances: Sequence[Utterance],
    types: Sequence[StressType],
    lang: str,
    seed: int,
    per_type: int,
) -> list[Perturbation]:
    """At most ``per_type`` perturbations of each of ``types`` (ST-1 … ST-4) over
    ``utterances``, in the order of ``types``; the same arguments give the same list.

    Raises :class:`~bot.core.errors.StudyDataError` for a type that is not generated offline
    (ST-5 … ST-11 are suggested, proposed or authored), a language other than en or it, or
    a negative ``per_type``.
    """
    check_language(lang)
    offline = [t for t in dict.fromkeys(types) if t in GENERATED_TYPES]
    others = [t.value for t in types if t not in GENERATED_TYPES]
    if others:
        raise StudyDataError(
            f"{', '.join(others)} cannot be generated offline (only ST-1 to ST-4); "
            "use `ozlab stress suggest` and write them, or have a language model propose them"
        )
    if per_type < 0:
        raise StudyDataError(f"per_type must be 0 or more, not {per_type}")
    first: dict[tuple[str, int], Utterance] = {}
    for u in utterances:  # an utterance listed twice is tested once
        first.setdefault((u.session_id, u.turn), u)
    unique = list(first.values())
    made: list[Perturbation] = []
    for stress_type in offline:
        applicable = {
            (u.session_id, u.turn): p
            for u in unique
            if (p := perturb(u, stress_type, lang, seed)) is not None
        }
        chosen = [u for u in unique if (u.session_id, u.turn) in applicable]
        made.extend(
            applicable[(u.session_id, u.turn)] for u in spread(chosen, stress_type, seed, per_type)
        )
    return made
