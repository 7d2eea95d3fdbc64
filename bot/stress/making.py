"""``ozlab stress generate | suggest | propose | import``: making stress tests from the
logged utterances (the perturbations themselves come from ``bot.stress``) and keeping them
in the study database. Generated and imported tests may be run at once; a language
model's proposals are stored as pending and only a person's word makes them usable.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from typing import TextIO

from bot.core.errors import SystemSetupError
from bot.core.phenomena import StressType
from bot.core.stress import Perturbation
from bot.store.interface import StressTests
from bot.store.stress_records import Review
from bot.stress.generate import GENERATED_TYPES
from bot.stress.propose import PROPOSED_TYPES, ReviewDecision, review
from bot.stress.replaying import open_study_db, study_parts, types_given
from scenarios.stored import read_definitions


async def making_command(args: argparse.Namespace) -> int:
    store = await open_study_db(args.db)
    try:
        definitions = await store.latest_definitions()
        lang = getattr(args, "lang", None) or _study_language(definitions)
        match args.stress_command:
            case "generate":
                return await _generate(store, args, lang)
            case "suggest":
                return await _suggest(store, args, lang)
            case "propose":
                return await _propose(store, args, lang, definitions)
            case _:
                return await _import(store, args)
    finally:
        await store.close()


def _study_language(definitions: Mapping[str, str]) -> str:
    """The study's own language when ozlab can perturb it (en or it), else English."""
    for definition in read_definitions(definitions).values():
        if definition.language in ("en", "it"):
            return definition.language
    return "en"


def _types(text: str, default: frozenset[StressType]) -> list[StressType]:
    return types_given(text) or [t for t in StressType if t in default]


def _by_type(made: list[Perturbation]) -> str:
    counts: dict[str, int] = {}
    for p in made:
        counts[p.stress_type.value] = counts.get(p.stress_type.value, 0) + 1
    return ", ".join(f"{n} {t}" for t, n in counts.items()) or "none"


async def _generate(store: StressTests, args: argparse.Namespace, lang: str) -> int:
    from bot.stress.generate import generate

    utterances = await store.stress_utterances()
    made = generate(utterances, _types(args.types, GENERATED_TYPES), lang, args.seed, args.per_type)
    before = {t.id for t in await store.stress_tests()}
    ids = await store.add_stress_tests(made, Review.ACCEPTED)
    new = len(set(ids) - before)
    print(
        f"{len(made)} tests generated from {len(utterances)} logged utterances ({lang},"
        f" seed {args.seed}): {_by_type(made)}; {new} new in the database."
    )
    print(f"Run them with: ozlab stress run --db {args.db}")
    return 0


async def _suggest(store: StressTests, args: argparse.Namespace, lang: str) -> int:
    from bot.stress.suggest import grouped, suggest

    utterances = await store.stress_utterances()
    wanted = types_given(args.types) or list(StressType)
    groups = grouped(suggest(utterances, wanted, lang))
    for kind in wanted:
        mine = [g for g in groups if g.stress_type is kind]
        typed = sum(len(g.places) for g in mine)
        different = f", {len(mine)} different" if len(mine) < typed else ""
        print(f"{kind.value} {kind.title}: {typed} logged utterances{different}")
        for g in mine:
            print(f"  {g.utterance.text!r} — {g.reason}; {g.where()}")
    print(
        "Write a variant for those you choose in a YAML or CSV file (session, turn, type,"
        " perturbed) and add them with: ozlab stress import --db "
        f"{args.db} FILE"
    )
    return 0


async def _import(store: StressTests, args: argparse.Namespace) -> int:
    from bot.stress.authored import match_log, read_authored_tests

    tests = match_log(read_authored_tests(args.file), await store.stress_utterances())
    before = {t.id for t in await store.stress_tests()}
    ids = await store.add_stress_tests(tests, Review.ACCEPTED)
    ad_hoc = sum(p.ad_hoc for p in tests)
    print(
        f"{len(tests)} authored tests read ({_by_type(tests)}; {ad_hoc} ad hoc);"
        f" {len(set(ids) - before)} new in the database."
    )
    return 0


async def _propose(
    store: StressTests, args: argparse.Namespace, lang: str, definitions: Mapping[str, str]
) -> int:
    if not args.review_only:
        from bot.stress.propose import propose

        _, _, spec = study_parts(definitions, args.study)
        if spec is None:
            raise SystemSetupError(
                "the study names no stress_model (an OpenAI-compatible endpoint, with the"
                " settings of an openai system) to propose tests with",
                field="stress_model",
            )
        proposals = await propose(
            await store.stress_utterances(),
            _types(args.types, PROPOSED_TYPES),
            lang,
            spec,
            per_type=args.per_type,
            on_problem=lambda message: print(message, file=sys.stderr),
        )
        await store.add_stress_tests(proposals, Review.PENDING)
        print(f"{len(proposals)} proposals by {spec.model}: {_by_type(proposals)}.")
    reviewed = await review_pending(store, sys.stdin.readline, sys.stdout)
    print(
        f"Reviewed {sum(reviewed.values())}: {reviewed.get(Review.ACCEPTED, 0)} accepted or"
        f" edited, {reviewed.get(Review.REJECTED, 0)} rejected."
    )
    return 0


def _answer(decision: ReviewDecision) -> Callable[[Perturbation], ReviewDecision]:
    return lambda _: decision


async def review_pending(
    store: StressTests, read: Callable[[], str], out: TextIO
) -> dict[Review, int]:
    """Each pending proposal shown to a person: a)ccept, e)dit (then the new text),
    r)eject, s)kip for later, q)uit. Every decision is stored as it is given."""
    given: dict[Review, int] = {}
    pending = await store.stress_tests(review=Review.PENDING)
    for n, test in enumerate(pending, 1):
        p = test.perturbation
        out.write(
            f"\n({n} of {len(pending)}) {p.stress_type.value} {p.stress_type.title},"
            f" session {p.session_id} turn {p.turn}\n  original : {p.original}\n"
            f"  proposed : {p.perturbed}\n" + (f"  change   : {p.change}\n" if p.change else "")
        )
        while True:
            out.write("a)ccept  e)dit  r)eject  s)kip  q)uit > ")
            out.flush()
            answer = read().strip().lower()[:1]
            if answer in ("a", "e", "r", "s", "q", ""):
                break
            out.write("Please answer a, e, r, s or q.\n")
        if answer in ("q", ""):
            break
        if answer == "s":
            continue
        decision = ReviewDecision.reject()
        if answer == "a":
            decision = ReviewDecision.accept()
        elif answer == "e":
            out.write("Your version: ")
            out.flush()
            text = read().strip()
            decision = ReviewDecision.edit(text) if text else ReviewDecision.reject()
        kept = review([p], _answer(decision))
        if kept:
            edited = kept[0].perturbed if kept[0].perturbed != p.perturbed else None
            await store.review_stress_test(test.id, Review.ACCEPTED, edited)
            given[Review.ACCEPTED] = given.get(Review.ACCEPTED, 0) + 1
        else:
            await store.review_stress_test(test.id, Review.REJECTED)
            given[Review.REJECTED] = given.get(Review.REJECTED, 0) + 1
    out.write("\n")
    return given
