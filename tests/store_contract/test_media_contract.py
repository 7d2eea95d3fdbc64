"""Voice notes and photos: a row per file with its exchange and transcript, the bytes of a
kept file stored once by content hash and never those of a discarded one, and an erasure
(live, and through the ledger in a backup) that leaves no byte of them."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.core.media import FileShown, Medium, Transcript
from bot.engine import effects as fx
from bot.store.backup_erasure import erase_in_backup
from bot.store.interface import StudyStore
from bot.store.model import SNAPSHOT_COLUMNS, StepCommit
from tests.store_contract.backends import stored_bytes
from tests.store_contract.conftest import OpenStore
from tests.store_contract.records import session, step, tables

PHOTO = b"\xff\xd8\xff\xe0 a photo of a red bicycle " + bytes(range(256)) * 40
VOICE = b"OggS a voice that says hello " + bytes(range(255, -1, -1)) * 40


HEARD = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sent(participant: str, data: bytes, kind: str, *, kept: bool, first: bool = True) -> StepCommit:
    sid = f"{participant}-1"
    heard = None
    if kind == "voice":
        heard = Transcript("hello there", "openai", "whisper-1", HEARD, HEARD, 4.0)
    medium = Medium(kind, "file-id", len(data), "audio/ogg" if kind == "voice" else None, 4,
                    640 if kind == "photo" else None, 480 if kind == "photo" else None)  # fmt: skip
    turn = 1 if first else 2
    record = fx.RecordMedia(sid, turn, medium, len(data), digest(data), kept, heard, 31.5, 420.25)
    return step(
        participant,
        *(session(participant) if first else ()),
        record,
        fx.RecordUserTurn(sid, turn, heard.text if heard else ""),
        files={digest(data): data} if kept else {},
    )


def media_rows(found: dict[str, list[tuple[object, ...]]]) -> list[dict[str, Any]]:
    columns = SNAPSHOT_COLUMNS["media"]
    return [dict(zip(columns, row, strict=True)) for row in found.get("media", [])]


async def test_a_file_is_a_row_with_its_exchange_and_transcript(store: StudyStore) -> None:
    await store.commit_step(sent("p", VOICE, "voice", kept=False))
    await store.commit_step(sent("q", PHOTO, "photo", kept=True))
    voice, photo = media_rows(await tables(store))
    assert {k: voice[k] for k in ("participant_id", "session_id", "turn", "kind", "mime")} == {
        "participant_id": "p",
        "session_id": "p-1",
        "turn": 1,
        "kind": "voice",
        "mime": "audio/ogg",
    }
    assert (voice["duration"], voice["size"], voice["digest"]) == (4, len(VOICE), digest(VOICE))
    assert (voice["kept"], voice["transcript"], voice["engine"], voice["model"]) == (
        0,
        "hello there",
        "openai",
        "whisper-1",
    )
    assert (voice["fetch_ms"], voice["transcribe_ms"]) == (31.5, 420.25)
    assert (photo["kind"], photo["width"], photo["height"], photo["kept"]) == ("photo", 640, 480, 1)
    assert photo["transcript"] is None and photo["digest"] == digest(PHOTO)
    # the console's transcript tells the file beside the words
    spoken, shown = [await store.transcript(sid) for sid in ("p-1", "q-1")]
    assert spoken is not None and shown is not None
    assert spoken.exchanges[0].file == FileShown("voice", 4)
    assert shown.exchanges[0].file == FileShown("photo", 4, 640, 480)
    assert shown.exchanges[0].file.label() == "[photo 640×480]"


async def test_only_kept_bytes_are_stored_and_erasure_leaves_none(
    open_store: OpenStore, backend: str, location: str, tmp_path: Path, request: Any
) -> None:
    store = await open_store()
    server = request.getfixturevalue("postgres") if backend == "postgresql" else None
    place = tmp_path / "study.sqlite"
    # bytes of this test alone: a server's files hold the other tests' databases too
    photo, voice = PHOTO.replace(b"red", b"blue"), VOICE.replace(b"hello", b"adieu")
    await store.commit_step(sent("p", voice, "voice", kept=False))
    await store.commit_step(sent("p", photo, "photo", kept=True, first=False))
    await store.commit_step(sent("q", photo, "photo", kept=True))  # the same bytes again
    stored = stored_bytes(backend, location, place, server)
    assert photo[:40] in stored and voice[:40] not in stored
    assert len(media_rows(await tables(store))) == 3

    assert await store.kept_file(digest(photo)) == photo
    assert await store.kept_file(digest(voice)) is None  # discarded
    await store.erase_participant("p")  # q's photo is the same file: it stays
    assert photo[:40] in stored_bytes(backend, location, place, server)
    assert [r["participant_id"] for r in media_rows(await tables(store))] == ["q"]

    await store.erase_participant("q")
    assert photo[:40] not in stored_bytes(backend, location, place, server)
    assert await store.kept_file(digest(photo)) is None
    assert media_rows(await tables(store)) == []


async def test_the_ledger_erases_kept_files_in_a_backup(store: StudyStore, tmp_path: Path) -> None:
    await store.commit_step(sent("p", PHOTO, "photo", kept=True))
    backup = tmp_path / "monday.sqlite"
    await store.backup(backup)
    assert PHOTO[:40] in backup.read_bytes()
    await store.erase_participant("p")
    erase_in_backup(backup, await store.erasure_ledger())
    assert PHOTO[:40] not in backup.read_bytes()
