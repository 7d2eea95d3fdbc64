"""One study out of a database that holds several (``--study ID``).

A database is normally one study, but a researcher may run a pilot and the main study
into the same file: mixing them would pool participants of different definitions.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd

from analytics.data.loading import StudyData, load_study_data
from bot.core.errors import StudyDataError
from bot.store.opening import locate


class StudyChoiceError(StudyDataError):
    """The database holds several studies and none (or an unknown one) was chosen."""


def study_ids(data: StudyData) -> list[str]:
    """Every study the database knows: stored definitions, then studies seen in rows."""
    seen = [
        *data.bundles,
        *data.participants["study_id"].dropna().astype(str),
        *data.sessions["study_id"].dropna().astype(str),
    ]
    return list(dict.fromkeys(seen))


def load_study(db: Path | str, study_id: str | None = None) -> StudyData:
    """The study ``study_id`` of ``db`` (None: its only one): a file's rows of that study, or
    on a server the study's own schema."""
    if locate(db).server is not None:
        return select_study(load_study_data(db, study_id), None)
    return select_study(load_study_data(db), study_id)


def select_study(data: StudyData, study_id: str | None) -> StudyData:
    """``data`` restricted to ``study_id``; with ``None`` the only study, or an error naming
    the studies to choose from when there are several."""
    known = study_ids(data)
    if study_id is None:
        if len(known) <= 1:
            return data
        raise StudyChoiceError(
            f"this database holds {len(known)} studies ({', '.join(known)}): "
            "choose one with --study ID"
        )
    if study_id not in known:
        listed = ", ".join(known) or "none"
        raise StudyChoiceError(f"no study {study_id!r} in this database (studies: {listed})")
    if known == [study_id]:
        return data
    people = data.participants["study_id"].astype(object) == study_id
    participants = data.participants[people].reset_index(drop=True)
    members = set(participants["participant_id"].astype(str))
    sessions = data.sessions[data.sessions["study_id"].astype(object) == study_id]
    session_ids = set(sessions["session_id"].astype(str))

    def of_members(frame: pd.DataFrame) -> pd.DataFrame:
        keep = frame["participant_id"].astype(object).isin(members)
        return frame[keep].reset_index(drop=True)

    bundle = data.bundles.get(study_id)
    items, choices = data.items, data.choices
    if bundle is not None:
        instruments = set(bundle.questionnaires)
        items = items[items["questionnaire_id"].isin(instruments)].reset_index(drop=True)
        choices = choices[choices["questionnaire_id"].isin(instruments)].reset_index(drop=True)
    exchanges = data.exchanges[data.exchanges["session_id"].astype(object).isin(session_ids)]
    about = data.commands["session_id"].astype(object)
    # A command about no session gates a system or a whole study: kept with every study.
    commands = data.commands[about.isin(session_ids) | about.isna()]
    # Ratings follow the conversations they rate; material from outside the study is rated
    # in a job of its own (imported), which belongs to no one study: left out of a choice.
    rated = data.annotations["session_id"].astype(object).isin(session_ids)
    chosen = [study == study_id for study in data.vote_studies]
    return replace(
        data,
        sessions=sessions.reset_index(drop=True),
        exchanges=exchanges.reset_index(drop=True),
        responses=of_members(data.responses),
        events=of_members(data.events),
        participants=participants,
        commands=commands.reset_index(drop=True),
        items=items,
        choices=choices,
        bundles={study_id: bundle} if bundle is not None else {},
        annotations=data.annotations[rated].reset_index(drop=True),
        votes=data.votes[chosen].reset_index(drop=True) if chosen else data.votes,
        vote_studies=tuple(study for study in data.vote_studies if study == study_id),
        media=data.media[data.media["session_id"].astype(object).isin(session_ids)].reset_index(
            drop=True
        ),
    )
