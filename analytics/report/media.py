"""The report's section on voice notes and pictures: per system, what participants sent
(voice notes, photos) and what was refused and why, how often speech recognition failed,
where the time of an exchange with media went (fetching the file, speech to text, the
system, text to speech), and the word error rate where the study holds reference
transcripts (a stimulus read aloud, the task's ``media.reference_transcripts``).

Everything is read from what the bot recorded: the ``media`` rows (a file taken, its
fetch and transcription times), the events ``media_refused``, ``transcript_doubted``,
``reply_spoken`` (each spoken reply's engine and time) and ``pictures_shown``, and the
exchanges' system latency. No section when a study has none of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from analytics.data.loading import NO_SYSTEM, StudyData
from analytics.report import document as d
from analytics.report.document import Block, Heading, Paragraph
from analytics.statistics.system_reliability import event_data
from bot.core.vocabulary import EventKind, MediaProblem
from bot.core.word_error_rate import NO_ERRORS, WordErrors, word_errors

if TYPE_CHECKING:
    from analytics.report.numbers import Report

BY_SYSTEM_COLUMNS = (
    "system_id",
    "voice_notes",  # taken (fetched, and transcribed where the task transcribes)
    "voice_seconds",  # their length as Telegram said it, added up
    "photos",
    "refused",  # media_refused: every kind of file, every reason
    "transcribed",
    "recognition_failed",  # voice notes the engine could not read or heard nothing in
    "recognition_failure_rate",  # recognition_failed / (transcribed + recognition_failed)
    "doubted",  # transcripts the participant said were not what they said
    "spoken_replies",
    "speaking_failed",  # replies whose voice note failed (the text went instead)
    "pictures_shown",
)
REFUSED_COLUMNS = ("system_id", "kind", "problem", "n")
LATENCY_COLUMNS = ("system_id", "stage", "n", "median_ms", "p95_ms", "mean_ms", "share")
WER_COLUMNS = (
    "system_id",
    "utterances",
    "reference_words",
    "substitutions",
    "deletions",
    "insertions",
    "wer",
    "engines",
)
MISHEARD_COLUMNS = ("system_id", "session_id", "turn", "reference", "transcript", "wer")
STAGES = ("fetch", "speech_to_text", "system", "text_to_speech")
"""The stages of an exchange with media, in the order its time is spent."""
_STAGE_NAMES = {
    "fetch": "Fetching the file",
    "speech_to_text": "Speech to text",
    "system": "The system",
    "text_to_speech": "Text to speech",
}
_PROBLEMS = {
    MediaProblem.NOT_TAKEN.value: "a kind the task does not take",
    MediaProblem.TOO_BIG.value: "too big",
    MediaProblem.UNAVAILABLE.value: "Telegram would not give it",
    MediaProblem.UNREADABLE.value: "unreadable (the engine could not read it)",
    MediaProblem.NOT_HEARD.value: "no words heard",
}
RECOGNITION_FAILURES = (MediaProblem.UNREADABLE.value, MediaProblem.NOT_HEARD.value)
MISHEARD_SHOWN = 5
"""The worst-heard utterances shown per system (the JSON has them all)."""

METHOD = (
    "A voice note or photo counts once it was taken (fetched, and a voice note transcribed "
    "where the task transcribes); a refused file is counted with the reason the participant "
    "was given. A recognition failure is a voice note the speech engine could not read or "
    "heard no words in, out of the voice notes it was given. Where the time went is taken "
    "over the exchanges with media (a file from the participant, or a spoken reply), each "
    "stage over the exchanges where it happened: fetching the file from Telegram, speech "
    "to text, the system (from the call to its reply), and text to speech (the reply's "
    "voice notes added up per exchange, a failed attempt's time included); the share is "
    "each stage's mean over the sum of the stages' means. The word error rate is "
    "(substitutions + deletions + insertions) / words said, after folding case and dropping "
    "punctuation, pooled over utterances (errors summed over words summed, not a mean of "
    "rates): a session's first transcribed voice note is compared with its task's first "
    "reference transcript, the second with the second."
)


@dataclass(frozen=True)
class MediaSection:
    by_system: pd.DataFrame
    refused: pd.DataFrame
    latency: pd.DataFrame
    word_error_rate: pd.DataFrame
    """One row per system with voice notes compared with a reference (none: the study
    holds no reference transcripts)."""
    misheard: pd.DataFrame
    """Every utterance compared with its reference, the most errors first."""


def media_section(data: StudyData) -> MediaSection | None:
    """The section's tables; None when the study has no media of any kind."""
    media = data.media
    events = data.events
    kinds = events["kind"].astype(object)
    ours = (
        EventKind.MEDIA_REFUSED,
        EventKind.TRANSCRIPT_DOUBTED,
        EventKind.REPLY_SPOKEN,
        EventKind.PICTURES_SHOWN,
    )
    happened = events[kinds.isin([k.value for k in ours])]
    if media.empty and happened.empty:
        return None
    systems = _systems(data.sessions)
    media = media.assign(system_id=_system_of(media["session_id"], systems))
    facts = pd.DataFrame(
        {
            "system_id": _system_of(happened["session_id"], systems),
            "session_id": happened["session_id"].astype(object).to_numpy(),
            "kind": happened["kind"].astype(object).to_numpy(),
            "data": [event_data(v) for v in happened["data"]],
        }
    )
    compared = _compared(media, data)
    return MediaSection(
        by_system=_by_system(media, facts),
        refused=_refused(facts),
        latency=_latency(media, facts, data.exchanges),
        word_error_rate=_word_error_rate(compared, media),
        misheard=compared.drop(columns=["errors"]).reindex(columns=MISHEARD_COLUMNS),
    )


def _systems(sessions: pd.DataFrame) -> dict[str, str]:
    return {
        str(s): (NO_SYSTEM if pd.isna(system) else str(system))
        for s, system in zip(sessions["session_id"], sessions["system_id"], strict=True)
    }


def _system_of(session_ids: pd.Series, systems: Mapping[str, str]) -> np.ndarray:
    return np.array(
        [systems.get(str(s), NO_SYSTEM) for s in session_ids.astype(object)], dtype=object
    )


def _of_kind(facts: pd.DataFrame, kind: EventKind) -> pd.DataFrame:
    return facts[facts["kind"] == kind.value]


def _by_system(media: pd.DataFrame, facts: pd.DataFrame) -> pd.DataFrame:
    refused = _of_kind(facts, EventKind.MEDIA_REFUSED)
    misrecognised = refused[
        [
            p.get("kind") == "voice" and p.get("problem") in RECOGNITION_FAILURES
            for p in refused["data"]
        ]
    ]
    spoken = _of_kind(facts, EventKind.REPLY_SPOKEN)
    failed = np.array([bool(p.get("failed")) for p in spoken["data"]], dtype=bool)
    doubted = _of_kind(facts, EventKind.TRANSCRIPT_DOUBTED)
    shown = _of_kind(facts, EventKind.PICTURES_SHOWN)
    pictures = shown.assign(n=[len(p.get("pictures") or ()) for p in shown["data"]])
    rows = []
    for system in sorted(set(media["system_id"]) | set(facts["system_id"])):
        mine = media[media["system_id"] == system]
        voice = mine[mine["kind"] == "voice"]
        transcribed = int(voice["transcript"].notna().sum())
        not_read = int((misrecognised["system_id"] == system).sum())
        said = spoken["system_id"].to_numpy() == system
        tried = transcribed + not_read
        rows.append(
            {
                "system_id": system,
                "voice_notes": len(voice),
                "voice_seconds": int(pd.to_numeric(voice["duration"]).fillna(0).sum()),
                "photos": int((mine["kind"] == "photo").sum()),
                "refused": int((refused["system_id"] == system).sum()),
                "transcribed": transcribed,
                "recognition_failed": not_read,
                "recognition_failure_rate": not_read / tried if tried else np.nan,
                "doubted": int((doubted["system_id"] == system).sum()),
                "spoken_replies": int((said & ~failed).sum()),
                "speaking_failed": int((said & failed).sum()),
                "pictures_shown": int(pictures.loc[pictures["system_id"] == system, "n"].sum()),
            }
        )
    return pd.DataFrame(rows, columns=list(BY_SYSTEM_COLUMNS))


def _refused(facts: pd.DataFrame) -> pd.DataFrame:
    refused = _of_kind(facts, EventKind.MEDIA_REFUSED)
    frame = pd.DataFrame(
        {
            "system_id": refused["system_id"].to_numpy(),
            "kind": [str(p.get("kind", "")) for p in refused["data"]],
            "problem": [str(p.get("problem", "")) for p in refused["data"]],
        }
    )
    counted = frame.groupby(["system_id", "kind", "problem"]).size().rename("n").reset_index()
    return counted.reindex(columns=list(REFUSED_COLUMNS))


def _latency(media: pd.DataFrame, facts: pd.DataFrame, exchanges: pd.DataFrame) -> pd.DataFrame:
    spoken = _of_kind(facts, EventKind.REPLY_SPOKEN)
    speaking = pd.DataFrame(
        {
            "system_id": spoken["system_id"].to_numpy(),
            "session_id": spoken["session_id"].to_numpy(),
            "turn": [p.get("turn") for p in spoken["data"]],
            "ms": [p.get("speak_ms") for p in spoken["data"]],
        }
    ).dropna(subset=["turn", "ms"])
    per_exchange = speaking.groupby(["system_id", "session_id", "turn"], as_index=False)["ms"].sum()
    taken = media[["system_id", "session_id", "turn"]].astype({"turn": float})
    with_media = pd.concat([taken, per_exchange[["system_id", "session_id", "turn"]]])
    keys = set(
        zip(with_media["session_id"].astype(str), with_media["turn"].astype(float), strict=True)
    )
    replied = exchanges[exchanges["error"].isna() & exchanges["system_text"].notna()]
    chosen = [
        (str(s), float(t)) in keys
        for s, t in zip(replied["session_id"].astype(object), replied["turn"], strict=True)
    ]
    system = replied[chosen]
    samples = {
        "fetch": (media["system_id"], media["fetch_ms"]),
        "speech_to_text": (media["system_id"], media["transcribe_ms"]),
        "system": (system["system_id"].astype(object), system["latency_ms"]),
        "text_to_speech": (per_exchange["system_id"], per_exchange["ms"]),
    }
    rows = []
    for name in sorted(set(media["system_id"]) | set(per_exchange["system_id"])):
        found = []
        for stage in STAGES:
            owners, values = samples[stage]
            ms = pd.to_numeric(values[owners.to_numpy() == name], errors="coerce").dropna()
            ms = ms.to_numpy(dtype=float)
            if len(ms):
                found.append(
                    {
                        "system_id": name,
                        "stage": stage,
                        "n": len(ms),
                        "median_ms": float(np.median(ms)),
                        "p95_ms": float(np.percentile(ms, 95)),
                        "mean_ms": float(ms.mean()),
                    }
                )
        total = sum(row["mean_ms"] for row in found)
        rows += [{**row, "share": row["mean_ms"] / total if total else np.nan} for row in found]
    return pd.DataFrame(rows, columns=list(LATENCY_COLUMNS))


def _references(data: StudyData) -> dict[tuple[str, str], tuple[str, ...]]:
    """Each (study, scenario)'s reference transcripts, where it has any."""
    return {
        (study_id, scenario_id): scenario.media.reference_transcripts
        for study_id, bundle in data.bundles.items()
        for scenario_id, scenario in bundle.scenarios.items()
        if scenario.media.reference_transcripts
    }


def _compared(media: pd.DataFrame, data: StudyData) -> pd.DataFrame:
    """Every transcribed voice note that has a reference, with its errors and rate, the
    most errors first."""
    references = _references(data)
    columns = [*MISHEARD_COLUMNS, "errors"]
    if not references:
        return pd.DataFrame(columns=columns)
    sessions = data.sessions.set_index(data.sessions["session_id"].astype(str))
    heard = media[(media["kind"] == "voice") & media["transcript"].notna()]
    heard = heard.sort_values(["session_id", "turn"], kind="stable")
    rows = []
    for session_id, said in heard.groupby(heard["session_id"].astype(str), sort=False):
        if session_id not in sessions.index:
            continue
        session = sessions.loc[session_id]
        sentences = references.get((str(session["study_id"]), str(session["scenario_id"])), ())
        for sentence, row in zip(sentences, said.to_dict("records"), strict=False):
            errors = word_errors(sentence, str(row["transcript"]))
            rows.append(
                {
                    "system_id": row["system_id"],
                    "session_id": session_id,
                    "turn": int(row["turn"]),
                    "reference": sentence,
                    "transcript": str(row["transcript"]),
                    "wer": errors.rate,
                    "errors": errors,
                }
            )
    frame = pd.DataFrame(rows, columns=columns)
    return frame.sort_values(["wer", "session_id", "turn"], ascending=[False, True, True])


def _word_error_rate(compared: pd.DataFrame, media: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for system, mine in compared.groupby("system_id", sort=True):
        total: WordErrors = sum(mine["errors"], NO_ERRORS)
        voice = media[(media["system_id"] == system) & media["transcript"].notna()]
        engines = sorted({f"{e} {m}" for e, m in zip(voice["engine"], voice["model"], strict=True)})
        rows.append(
            {
                "system_id": system,
                "utterances": len(mine),
                "reference_words": total.reference_words,
                "substitutions": total.substitutions,
                "deletions": total.deletions,
                "insertions": total.insertions,
                "wer": total.rate,
                "engines": ", ".join(engines),
            }
        )
    return pd.DataFrame(rows, columns=list(WER_COLUMNS))


def media_blocks(report: Report, limit: int | None = None) -> list[Block]:
    """The whole section; nothing when the study has no media."""
    found = report.media
    if found is None:
        return []
    blocks: list[Block] = [Heading("Voice notes and pictures"), Paragraph(METHOD, "method")]
    rows = [
        (
            r["system_id"],
            d.count(r["voice_notes"]),
            d.seconds(r["voice_seconds"]),
            d.count(r["photos"]),
            d.count(r["refused"]),
            d.count(r["recognition_failed"]),
            d.pct(r["recognition_failure_rate"]),
            d.count(r["doubted"]),
            d.count(r["spoken_replies"]),
            d.count(r["speaking_failed"]),
            d.count(r["pictures_shown"]),
        )
        for r in found.by_system.to_dict("records")
    ]
    blocks.append(
        d.table(
            (
                "System",
                "Voice notes",
                "Length",
                "Photos",
                "Refused",
                "Not recognised",
                "Recognition failures",
                "Transcript doubted",
                "Spoken replies",
                "Speaking failed",
                "Pictures shown",
            ),
            rows,
            caption="Media per system",
            numeric=(False, *[True] * 10),
        )
    )
    if len(found.refused):
        blocks.append(
            d.table(
                ("System", "File", "Why", "n"),
                [
                    (
                        r["system_id"],
                        r["kind"],
                        _PROBLEMS.get(r["problem"], r["problem"]),
                        d.count(r["n"]),
                    )
                    for r in found.refused.to_dict("records")
                ],
                caption="Files refused, and why",
                numeric=(False, False, False, True),
                group_by=0,
            )
        )
    if len(found.latency):
        blocks.append(
            d.table(
                ("System", "Stage", "n", "Median", "95th percentile", "Mean", "Share"),
                [
                    (
                        r["system_id"],
                        _STAGE_NAMES[r["stage"]],
                        d.count(r["n"]),
                        _ms(r["median_ms"]),
                        _ms(r["p95_ms"]),
                        _ms(r["mean_ms"]),
                        d.pct(r["share"]),
                    )
                    for r in found.latency.to_dict("records")
                ],
                caption="Where the time of an exchange with media went",
                numeric=(False, False, True, True, True, True, True),
                group_by=0,
            )
        )
    blocks += _wer_blocks(found, limit)
    return blocks


def _wer_blocks(found: MediaSection, limit: int | None) -> list[Block]:
    if found.word_error_rate.empty:
        return [
            Paragraph(
                "No word error rate: no task of this study holds reference transcripts "
                "(media.reference_transcripts) that its voice notes were compared with.",
                "note",
            )
        ]
    blocks: list[Block] = [
        d.table(
            (
                "System",
                "Utterances",
                "Words said",
                "Substituted",
                "Deleted",
                "Inserted",
                "Word error rate",
                "Engine",
            ),
            [
                (
                    r["system_id"],
                    d.count(r["utterances"]),
                    d.count(r["reference_words"]),
                    d.count(r["substitutions"]),
                    d.count(r["deletions"]),
                    d.count(r["insertions"]),
                    d.pct(r["wer"], 1),
                    r["engines"],
                )
                for r in found.word_error_rate.to_dict("records")
            ],
            caption="Word error rate per system, against the reference transcripts",
            numeric=(False, *[True] * 6, False),
        )
    ]
    worst = found.misheard[found.misheard["wer"] > 0]
    worst = worst.groupby("system_id", sort=True).head(MISHEARD_SHOWN)
    if len(worst):
        blocks.append(
            d.table(
                ("System", "Said", "Heard", "WER"),
                [
                    (r["system_id"], r["reference"], r["transcript"], d.pct(r["wer"], 0))
                    for r in worst.sort_values("system_id", kind="stable").to_dict("records")
                ],
                caption=f"The worst-heard utterances (at most {MISHEARD_SHOWN} per system)",
                numeric=(False, False, False, True),
                limit=limit,
                group_by=0,
            )
        )
    return blocks


def _ms(value: Any) -> str:
    """``850 ms``, ``2.4 s``."""
    if d.missing(value):
        return d.DASH
    return f"{float(value):.0f} ms" if float(value) < 1000 else d.seconds(float(value) / 1000)


def media_json(found: MediaSection) -> dict[str, Any]:
    """The section's numbers for ``--format json``."""
    from analytics.report.render_json import records

    return {
        "method": METHOD,
        "by_system": records(found.by_system),
        "refused": records(found.refused),
        "latency": records(found.latency),
        "word_error_rate": records(found.word_error_rate),
        "utterances": records(found.misheard),
    }
