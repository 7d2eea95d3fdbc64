"""The report's voice notes and pictures, on a study written in the test through the store
as the bot writes it: media per system and what was refused and why, speech recognition
failures, where the time of an exchange with media went, and the word error rate against
the task's reference transcripts; the same numbers in the JSON; a transcript is data in
every format; a study without media has no such section; PostgreSQL reports the same."""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from analytics.data.loading import load_study_data
from analytics.report.document import Heading, Table
from analytics.report.numbers import Report, build_report
from analytics.report.present import document
from analytics.report.render_json import report_to_dict
from bot.cli import analytics_main as main
from bot.core.media import Medium, Transcript
from bot.core.vocabulary import Consent, EventKind, MediaProblem
from bot.engine import effects as fx
from bot.store.definition import definition_json
from bot.store.model import StepCommit
from bot.store.sqlite import open_store
from scenarios.models import StudyBundle
from tests.postgres_server import PostgresServer
from tests.test_postgres_snapshot import copied
from tests.test_report_latex import pdflatex

SAID = ("I want a gift for my sister.", "Something under fifty euros.")
HOSTILE = "I want a gift for my sister & \\textbf{x} <b> \x1b[2J"
"""Heard as the sentence and four words more (textbf, x, <b>, 2j): 4 insertions of 7."""


def bundle(media: bool = True) -> StudyBundle:
    scenario: dict[str, object] = {"id": "read", "title": "Read", "brief": "Read aloud."}
    if media:
        scenario["media"] = {
            "participant_sends": ["voice", "photo"],
            "system_returns": ["voice", "photo"],
            "system_receives": "both",
            "reference_transcripts": list(SAID),
        }
    return StudyBundle.model_validate(
        {
            "study": {
                "id": "hmd",
                "title": "Spoken gifts",
                "texts": {"welcome": "Hi", "consent": "Agree?", "declined": "Bye"},
                "systems": [{"type": "demo", "id": s} for s in ("alpha", "beta")],
                "scenarios": ["read"],
                "design": {"type": "random", "seed": 7},
                "speech": {
                    "speech_to_text": {"engine": "pocketsphinx"},
                    "text_to_speech": {"engine": "espeak-ng"},
                },
            },
            "scenarios": {"read": scenario},
            "questionnaires": {},
        }
    )


def voice(session: str, turn: int, heard: str, seconds: int, fetch: float, stt: float) -> fx.Record:
    data = f"{session}-{turn}".encode()
    medium = Medium("voice", "file", len(data), "audio/ogg", seconds)
    at = datetime(2026, 11, 29, tzinfo=UTC)
    words = Transcript(
        heard, "pocketsphinx", "en-us", at, at + timedelta(seconds=stt / 1000), seconds
    )
    digest = hashlib.sha256(data).hexdigest()
    return fx.RecordMedia(session, turn, medium, len(data), digest, False, words, fetch, stt)


def photo(session: str, turn: int, fetch: float) -> fx.Record:
    medium = Medium("photo", "file", 100, "image/jpeg", None, 640, 480, "a gift?")
    digest = hashlib.sha256(session.encode()).hexdigest()
    return fx.RecordMedia(session, turn, medium, 100, digest, False, None, fetch, None)


def event(session: str, what: EventKind, **data: object) -> fx.Record:
    return fx.RecordEvent(what, session, data)


def spoken(session: str, turn: int, ms: float, failed: bool = False) -> fx.Record:
    return event(session, EventKind.REPLY_SPOKEN, turn=turn, speak_ms=ms, engine="espeak-ng",
                 model="en", failed=failed)  # fmt: skip


def refused(session: str, kind: str, problem: MediaProblem) -> fx.Record:
    return event(session, EventKind.MEDIA_REFUSED, kind=kind, problem=problem.value, size=10)


def turn(session: str, n: int, said: str, latency: float, *before: fx.Record) -> list[fx.Record]:
    return [
        *before,
        fx.RecordUserTurn(session, n, said),
        fx.RecordSystemTurn(session, n, "ok", latency),
    ]


# Per participant: their system and their steps, each a list of records.
STEPS: dict[str, tuple[str, list[list[fx.Record]]]] = {
    "a0": ("alpha", [
        turn("a0-read", 1, "i want a gift for my sister", 500.0,
             voice("a0-read", 1, "i want a gift for my sister", 3, 40.0, 900.0)),
        [spoken("a0-read", 1, 300.0)],
        [refused("a0-read", "voice", MediaProblem.NOT_HEARD)],
        turn("a0-read", 2, "something under fifteen euros", 700.0,
             voice("a0-read", 2, "something under fifteen euros", 2, 60.0, 1100.0)),
        [spoken("a0-read", 2, 200.0), spoken("a0-read", 2, 300.0)],
    ]),
    "a1": ("alpha", [
        turn("a1-read", 1, HOSTILE, 600.0, voice("a1-read", 1, HOSTILE, 4, 50.0, 1000.0)),
        [event("a1-read", EventKind.TRANSCRIPT_DOUBTED, turn=1)],
        turn("a1-read", 2, "a gift?", 900.0, photo("a1-read", 2, 80.0)),
        [event("a1-read", EventKind.PICTURES_SHOWN, turn=2,
               pictures=[{"sha256": "0" * 64, "mime": "image/jpeg", "caption": "this?"}] * 2)],
    ]),
    "b0": ("beta", [
        [refused("b0-read", "voice", MediaProblem.UNREADABLE)],
        [refused("b0-read", "video_note", MediaProblem.NOT_TAKEN)],
        [refused("b0-read", "photo", MediaProblem.TOO_BIG)],
        turn("b0-read", 1, "i want a gift for my sister", 1500.0,
             voice("b0-read", 1, "I want a gift for my sister", 5, 30.0, 2000.0)),
        [spoken("b0-read", 1, 1000.0)],
        turn("b0-read", 2, "typed", 100.0),
        [spoken("b0-read", 2, 50.0, failed=True)],
        turn("b0-read", 3, "typed, and not spoken", 5000.0),
    ]),
}  # fmt: skip


async def write_media_study(db: Path, media: bool = True) -> None:
    """The study above into ``db`` through the store's ``commit_step`` (without ``media``:
    the same dialogues typed, without a file, a spoken reply or a refusal)."""
    study = bundle(media)
    store = await open_store(db)

    async def step(participant: str, *records: fx.Record) -> None:
        await store.commit_step(
            StepCommit(study.study.id, participant, "{}", None, "sealed", records)
        )

    try:
        await store.record_definition(study.study.id, definition_json(study))
        for pid, (system, steps) in STEPS.items():
            await step(pid, fx.RecordConsent(Consent.ACCEPTED))
            await step(pid, fx.OpenSession(f"{pid}-read", "read", system, 0, "random", "7"))
            for records in steps:
                kept = [
                    r for r in records
                    if media or isinstance(r, fx.RecordUserTurn | fx.RecordSystemTurn)
                ]  # fmt: skip
                if kept:
                    await step(pid, *kept)
    finally:
        await store.close()


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("media") / "study.sqlite"
    asyncio.run(write_media_study(path))
    return path


@pytest.fixture(scope="module")
def report(db: Path) -> Report:
    return build_report(load_study_data(db))


def rows(frame, **where: object) -> list[dict]:
    chosen = frame
    for column, value in where.items():
        chosen = chosen[chosen[column] == value]
    return chosen.to_dict("records")


def test_media_per_system_and_what_was_refused(report: Report) -> None:
    assert report.media is not None
    (alpha,) = rows(report.media.by_system, system_id="alpha")
    (beta,) = rows(report.media.by_system, system_id="beta")
    assert {k: alpha[k] for k in ("voice_notes", "voice_seconds", "photos", "refused")} == {
        "voice_notes": 3, "voice_seconds": 9, "photos": 1, "refused": 1,
    }  # fmt: skip
    assert (alpha["spoken_replies"], alpha["speaking_failed"], alpha["pictures_shown"]) == (3, 0, 2)
    assert (beta["voice_notes"], beta["photos"], beta["refused"]) == (1, 0, 3)
    assert (beta["spoken_replies"], beta["speaking_failed"]) == (1, 1)
    why = {(r["system_id"], r["kind"], r["problem"]): r["n"] for r in rows(report.media.refused)}
    assert why == {
        ("alpha", "voice", "not_heard"): 1,
        ("beta", "voice", "unreadable"): 1,
        ("beta", "video_note", "not_taken"): 1,
        ("beta", "photo", "too_big"): 1,
    }


def test_speech_recognition_failures_per_system(report: Report) -> None:
    assert report.media is not None
    by = {r["system_id"]: r for r in rows(report.media.by_system)}
    # a voice note not heard or unreadable, out of those the engine was given
    assert (by["alpha"]["transcribed"], by["alpha"]["recognition_failed"]) == (3, 1)
    assert by["alpha"]["recognition_failure_rate"] == pytest.approx(1 / 4)
    assert (by["beta"]["transcribed"], by["beta"]["recognition_failed"]) == (1, 1)
    assert by["beta"]["recognition_failure_rate"] == pytest.approx(1 / 2)
    assert (by["alpha"]["doubted"], by["beta"]["doubted"]) == (1, 0)


def test_where_the_time_of_an_exchange_with_media_went(report: Report) -> None:
    assert report.media is not None
    latency = report.media.latency
    stages = {(r["system_id"], r["stage"]): r for r in rows(latency)}
    fetch = stages[("alpha", "fetch")]  # 40, 60, 50, 80
    assert (fetch["n"], fetch["median_ms"], fetch["mean_ms"]) == (4, 55.0, 57.5)
    assert fetch["p95_ms"] == pytest.approx(77.0)  # linear between 60 and 80
    stt = stages[("alpha", "speech_to_text")]
    assert (stt["n"], stt["mean_ms"]) == (3, 1000.0)  # the photo has no transcription
    system = stages[("alpha", "system")]  # every exchange that began with a file
    assert (system["n"], system["median_ms"], system["mean_ms"]) == (4, 650.0, 675.0)
    tts = stages[("alpha", "text_to_speech")]  # a reply's two voice notes added up: 300, 500
    assert (tts["n"], tts["median_ms"]) == (2, 400.0)
    total = 57.5 + 1000.0 + 675.0 + 400.0
    assert tts["share"] == pytest.approx(400.0 / total)
    assert sum(r["share"] for r in rows(latency, system_id="alpha")) == pytest.approx(1.0)
    # beta: its typed turn with a (failed) spoken reply counts, its typed turn without not
    beta = {r["stage"]: r for r in rows(latency, system_id="beta")}
    assert (beta["system"]["n"], beta["system"]["mean_ms"]) == (2, 800.0)
    assert (beta["text_to_speech"]["n"], beta["text_to_speech"]["mean_ms"]) == (2, 525.0)
    assert list(latency["stage"][latency["system_id"] == "beta"]) == [
        "fetch", "speech_to_text", "system", "text_to_speech",
    ]  # fmt: skip


def test_the_word_error_rate_against_the_reference_transcripts(report: Report) -> None:
    assert report.media is not None
    by = {r["system_id"]: r for r in rows(report.media.word_error_rate)}
    # alpha: 0 of 7, 1 substitution of 4 (fifteen for fifty), 4 insertions of 7
    alpha = by["alpha"]
    assert (alpha["utterances"], alpha["reference_words"]) == (3, 18)
    assert (alpha["substitutions"], alpha["deletions"], alpha["insertions"]) == (1, 0, 4)
    assert alpha["wer"] == pytest.approx(5 / 18)
    assert (by["beta"]["utterances"], by["beta"]["wer"]) == (1, 0.0)  # case and "." folded
    assert alpha["engines"] == "pocketsphinx en-us"
    second = rows(report.media.misheard, session_id="a0-read", turn=2)
    assert [(r["reference"], r["transcript"]) for r in second] == [
        (SAID[1], "something under fifteen euros")
    ]
    assert report.media.misheard["wer"].is_monotonic_decreasing  # the worst first


def test_the_document_shows_the_section_and_the_json_the_same_numbers(
    report: Report, db: Path
) -> None:
    blocks = document(report)
    headings = [b.text for b in blocks if isinstance(b, Heading)]
    assert "Voice notes and pictures" in headings
    assert headings.index("Voice notes and pictures") > headings.index("System reliability")
    tables = {b.caption: b for b in blocks if isinstance(b, Table)}
    wer = tables["Word error rate per system, against the reference transcripts"]
    assert [(r[0], r[6]) for r in wer.rows] == [("alpha", "27.8%"), ("beta", "0.0%")]
    worst = tables["The worst-heard utterances (at most 5 per system)"]
    assert [r[2] for r in worst.rows] == [HOSTILE, "something under fifteen euros"]
    whole = report_to_dict(report)
    media = whole["media"]
    assert media["by_system"][0]["recognition_failure_rate"] == 0.25
    assert media["word_error_rate"][0]["wer"] == pytest.approx(5 / 18)
    assert {(r["system_id"], r["stage"]): r["mean_ms"] for r in media["latency"]}[
        ("beta", "text_to_speech")
    ] == 525.0
    assert len(media["utterances"]) == 4
    keys = list(whole)
    assert keys.index("system_reliability") < keys.index("media") < keys.index("wizard")


def test_a_transcript_is_data_in_every_format(db: Path, tmp_path: Path) -> None:
    outs = [a for suffix in ("txt", "md", "html", "json", "tex")
            for a in ("--out", str(tmp_path / f"r.{suffix}"))]  # fmt: skip
    assert main(["report", "--db", str(db), *outs]) == 0
    text = (tmp_path / "r.txt").read_text()
    assert "\x1b" not in text and "\\x1b[2J" in text  # a visible escape, never obeyed
    html = (tmp_path / "r.html").read_text()
    assert "&lt;b&gt;" in html and "<b>" not in html.split("Voice notes and pictures")[1]
    markdown = (tmp_path / "r.md").read_text()
    assert "\\<b\\>" in markdown and "\x1b" not in markdown
    tables = "".join(p.read_text() for p in sorted((tmp_path / "r-tables").glob("*.tex")))
    assert r"\textbackslash{}textbf\{x\}" in tables and "\x1b" not in tables
    found = json.loads((tmp_path / "r.json").read_text())
    assert HOSTILE in [u["transcript"] for u in found["media"]["utterances"]]


def test_a_study_without_media_has_no_section(tmp_path: Path) -> None:
    db = tmp_path / "typed.sqlite"
    asyncio.run(write_media_study(db, media=False))
    report = build_report(load_study_data(db))
    assert report.media is None
    assert "Voice notes and pictures" not in [
        b.text for b in document(report) if isinstance(b, Heading)
    ]
    assert "media" not in report_to_dict(report)


def test_no_reference_transcripts_no_word_error_rate(tmp_path: Path) -> None:
    db = tmp_path / "unread.sqlite"
    asyncio.run(write_media_study(db))
    data = load_study_data(db)
    media = (
        data.bundles["hmd"].scenarios["read"].media.model_copy(update={"reference_transcripts": ()})
    )
    scenario = data.bundles["hmd"].scenarios["read"].model_copy(update={"media": media})
    unread = data.bundles["hmd"].model_copy(update={"scenarios": {"read": scenario}})
    report = build_report(type(data)(**{**data.__dict__, "bundles": {"hmd": unread}}))
    assert report.media is not None and report.media.word_error_rate.empty
    notes = [b.text for b in document(report) if getattr(b, "kind", "") == "note"]
    assert any("No word error rate" in note for note in notes)
    assert not math.isnan(report.media.by_system["recognition_failure_rate"].iloc[0])


@pytest.mark.slow
def test_postgresql_reports_the_same_media(db: Path, postgres: PostgresServer) -> None:
    url = copied(db, postgres)
    ours = report_to_dict(build_report(load_study_data(url)))["media"]
    assert ours == report_to_dict(build_report(load_study_data(db)))["media"]
    assert ours["word_error_rate"][0]["reference_words"] == 18


@pytest.mark.slow  # two pdflatex runs
def test_the_latex_report_with_transcripts_compiles(db: Path, tmp_path: Path) -> None:
    main_file = tmp_path / "paper.tex"
    assert main(["report", "--db", str(db), "--format", "tex", "--out", str(main_file)]) == 0
    done = pdflatex(main_file)
    assert done.returncode == 0, done.stdout[-2000:]
    assert (tmp_path / "paper.pdf").stat().st_size > 0
