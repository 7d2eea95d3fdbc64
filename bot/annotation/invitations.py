"""Annotators for an annotation job (``ozlab invite --annotators N --job NAME``): each gets a
pseudonym (``A-`` and four letters or digits, e.g. ``A-7K2Q``) and a single-use code
(``ann-CODE``, a deep link ``/start ann-CODE``), stored in the annotators' own table, never
among participants. The job is brought up to date first (its targets from the sessions stored
so far) and the work is assigned, so a new
annotator finds targets waiting.

The job comes from the study definition the database holds (stored when the bot ran), or
from ``--study`` (a shipped study's name or a YAML file), which is then checked first.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from bot.annotation.jobs import assign, job_of, prepare_job
from bot.core.errors import OzlabError, StudyDataError
from bot.core.researcher_files import private_file, write_rows
from bot.recruitment.invitations import Choose, deep_link, new_code
from bot.store.interface import AnnotationPlanning, StudyDefinitions
from scenarios.models import StudyBundle
from scenarios.stored import read_definitions

ANNOTATOR_CODE_PREFIX = "ann-"
_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"


class InvitingStore(AnnotationPlanning, StudyDefinitions, Protocol):
    """The roles inviting annotators uses: the job's plan, and the study it belongs to."""


@dataclass(frozen=True)
class Invited:
    job: str
    annotators: tuple[tuple[str, str], ...]  # (pseudonym, code)
    targets: int  # of the job, now
    new_targets: int


PSEUDONYM_FORM = f"A-[{_ALPHABET}]{{4}}"
"""An annotator's pseudonym as ozlab makes them (a regular expression): it may hold no digit."""


def new_pseudonym(choose: Choose = secrets.choice) -> str:
    return "A-" + "".join(choose(_ALPHABET) for _ in range(4))


async def study_bundle(store: StudyDefinitions, study: str | None) -> StudyBundle:
    """The study whose job is meant: stored in the database, or named with ``--study``."""
    stored = read_definitions(await store.latest_definitions())
    if study in stored or (study is None and len(stored) == 1):
        return stored[study or next(iter(stored))].bundle()
    if study is None:
        if stored:
            raise StudyDataError(
                f"this database holds several studies ({', '.join(stored)}): --study ID"
            )
        raise StudyDataError(
            "this database holds no study yet: name it with --study (a shipped study such as"
            " hri-cues, or its YAML file)"
        )
    from scenarios.loading import load_study

    return load_study(study)


def study_file_near(study_id: str, folder: Path) -> tuple[Path, StudyBundle] | None:
    """The study's file where ``ozlab new`` writes it (``ID/study.yaml`` in ``folder``), or
    ``study.yaml`` in ``folder`` itself, when one of them is the study ``study_id`` and loads:
    to tell a researcher that the file they changed and the stored study differ. None when
    neither is (a file elsewhere is named with ``--study``)."""
    from scenarios.loading import load_study

    for file in (folder / study_id / "study.yaml", folder / "study.yaml"):
        if not file.is_file():
            continue
        try:
            bundle = load_study(file)
        except (OzlabError, OSError):  # a file that does not load is not the one meant
            continue
        if bundle.study.id == study_id:
            return file, bundle
    return None


async def invite_annotators(
    store: InvitingStore,
    study: str | None,
    job_name: str,
    count: int,
    clock: Callable[[], float] = time.time,
    choose: Choose = secrets.choice,
) -> Invited:
    """``count`` new annotators of the job, its targets brought up to date, work assigned.
    ``choose`` draws the pseudonyms and codes: unguessable (``secrets``) for people; seeded
    only for simulated annotators, so that a demo writes the same database twice."""
    if count < 1:
        raise StudyDataError(
            f"--annotators {count}: give how many annotators to invite (1 or more)"
        )
    bundle = await study_bundle(store, study)
    job = job_of(bundle, job_name)
    new_targets = await prepare_job(store, bundle, job)
    made: list[tuple[str, str]] = []
    while len(made) < count:
        wanted = [
            (new_pseudonym(choose), ANNOTATOR_CODE_PREFIX + new_code(choose))
            for _ in range(count - len(made))
        ]
        added = set(await store.add_annotators(job.id, wanted))
        made += [pair for pair in wanted if pair[0] in added]
    await assign(store, bundle, job, clock())
    targets = len(await store.annotation_targets(job.id))
    return Invited(job.id, tuple(made), targets, new_targets)


def write_annotators(invited: Invited, bot: str, out: Path) -> None:
    with private_file(out) as handle:
        write_rows(
            handle,
            ["annotator", "job", "code", "link"],
            (
                (pseudonym, invited.job, code, deep_link(bot, code))
                for pseudonym, code in invited.annotators
            ),
        )
