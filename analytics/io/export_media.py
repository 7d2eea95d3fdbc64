"""The voice notes and photos of ``ozlab export``: a manifest of every file a participant
sent, one row each, with the exchange it belongs to, what it was, its content hash, whether
the study kept its bytes, and the transcript with the engine and model that made it.

Only a study whose participants sent files has this file. The bytes themselves stay in
the study database (kept files only), named by the hash given here; a transcript is the
participant's words and is neutralised in CSV as every text cell is.
"""

from __future__ import annotations

import pandas as pd

from analytics.data.loading import StudyData
from analytics.io.export import Column, Table, timed_columns

_YES_NO = {1: "yes", 0: "no"}
MEDIA = [
    Column("media_id", "integer", "the file's stable id"),
    Column("participant_id", "string", "pseudonym of the participant who sent it"),
    Column("session_id", "string", "the session (one task with one system)"),
    Column("system_id", "string", "the system under test of that session"),
    Column("turn", "integer", "the exchange whose participant's message it is, from 1"),
    Column("kind", "string", "voice (a voice note) or photo"),
    Column("mime", "string", "its type as Telegram said it (audio/ogg; photos are JPEG)"),
    Column("duration", "integer", "a voice note's length in seconds, as Telegram said it"),
    Column("width", "integer", "a photo's width in pixels (its largest size)"),
    Column("height", "integer", "a photo's height in pixels"),
    Column("size", "integer", "bytes fetched"),
    Column("sha256", "string", "SHA-256 of the bytes, hex: the name the kept file has"),
    Column(
        "kept",
        "integer",
        "the study keeps the bytes (a photo; a voice note only with speech.keep_audio): "
        "1 yes, 0 no (transcribed and discarded)",
        _YES_NO,
    ),
    Column("transcript", "string", "the words heard in a voice note (empty: not transcribed)"),
    Column("engine", "string", "the speech-to-text engine that heard them"),
    Column("model", "string", "the engine's model"),
    Column("fetch_ms", "number", "milliseconds to fetch the file from Telegram"),
    Column("transcribe_ms", "number", "milliseconds the engine took (empty: not transcribed)"),
    *timed_columns("at", "when the file was taken (and transcribed)"),
]


def media_tables(data: StudyData) -> dict[str, Table]:
    """``media``; nothing for a study whose participants sent no files."""
    media = data.media
    if media.empty:
        return {}
    seconds = pd.to_numeric(media["at"], errors="coerce").astype(float)
    systems = data.sessions.set_index("session_id")["system_id"].astype(object)
    frame = pd.DataFrame(
        {
            **{
                name: media[name].to_numpy()
                for name in ("media_id", "participant_id", "session_id", "turn", "kind")
            },
            "system_id": media["session_id"].astype(object).map(systems).to_numpy(),
            **{
                name: media[name].to_numpy()
                for name in ("mime", "duration", "width", "height", "size")
            },
            "sha256": media["digest"].to_numpy(),
            "kept": pd.to_numeric(media["kept"]).astype(int).to_numpy(),
            **{
                name: media[name].to_numpy()
                for name in ("transcript", "engine", "model", "fetch_ms", "transcribe_ms")
            },
            "at": seconds.to_numpy(),
            "at_iso": pd.to_datetime(seconds, unit="s", utc=True).dt.floor("s").to_numpy(),
        }
    )
    return {"media": Table(frame[[c.name for c in MEDIA]], MEDIA)}
