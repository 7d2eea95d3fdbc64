"""Files as the emulator keeps them: what participants send and what the bot uploads.

Telegram hands a bot a file in two steps: ``getFile`` turns a ``file_id`` into a
``file_path`` (refused with "file is too big" over the 20 MB a bot may download), and the
bytes are fetched from ``/file/bot<token>/<file_path>``. A photo arrives as several sizes,
each a file of its own, the largest last; Telegram recompresses them as JPEG. The limits
the Bot API documents for what a bot sends are checked here too: a photo up to 10 MB whose
width and height add up to 10,000 at most, with a ratio of 20 at most; any upload up to 50 MB.
"""

from __future__ import annotations

import hashlib
import io
import itertools
from dataclasses import dataclass
from typing import Any

from PIL import Image, UnidentifiedImageError

from bot.pilot.emulator.wire import bad_request

__all__ = [
    "MAX_DOWNLOAD",
    "MAX_PHOTO_UPLOAD",
    "MAX_UPLOAD",
    "FileStore",
    "StoredFile",
    "check_photo",
    "image_size",
    "photo_sizes",
]

MAX_DOWNLOAD = 20 * 1024 * 1024
"""The largest file ``getFile`` lets a bot download."""
MAX_UPLOAD = 50 * 1024 * 1024
"""The largest file a bot may upload (``sendVoice``, ``sendDocument``)."""
MAX_PHOTO_UPLOAD = 10 * 1024 * 1024
"""The largest photo a bot may send with ``sendPhoto``."""

PHOTO_SIDES = (90, 320, 800, 1280)
"""The longest sides of the sizes Telegram makes of a photo (its s, m, x and y; a larger
photo is scaled down to 1280)."""


@dataclass(frozen=True, slots=True)
class StoredFile:
    """One file the emulator holds, as ``getFile`` describes it."""

    file_id: str
    file_unique_id: str
    file_path: str
    data: bytes

    def to_api(self) -> dict[str, Any]:
        """The Bot API ``File``: no ``file_path`` for a file a bot may not download."""
        doc: dict[str, Any] = {
            "file_id": self.file_id,
            "file_unique_id": self.file_unique_id,
            "file_size": len(self.data),
        }
        if len(self.data) <= MAX_DOWNLOAD:
            doc["file_path"] = self.file_path
        return doc


class FileStore:
    """Every file of one emulator, by ``file_id`` and by ``file_path``."""

    def __init__(self) -> None:
        self._by_id: dict[str, StoredFile] = {}
        self._by_path: dict[str, StoredFile] = {}
        self._numbers = itertools.count(1)

    def add(self, folder: str, data: bytes, extension: str) -> StoredFile:
        """Keep ``data`` as a new file in ``folder`` (``voice``, ``photos``, …)."""
        number = next(self._numbers)
        digest = hashlib.sha256(data).hexdigest()
        stored = StoredFile(
            file_id=f"{folder[:2].upper()}ACAgIAAx{number:06d}{digest[:24]}",
            file_unique_id=f"AQAD{digest[:12]}",
            file_path=f"{folder}/file_{number}.{extension}",
            data=data,
        )
        self._by_id[stored.file_id] = stored
        self._by_path[stored.file_path] = stored
        return stored

    def by_id(self, file_id: object) -> StoredFile | None:
        return self._by_id.get(file_id) if isinstance(file_id, str) else None

    def by_path(self, file_path: str) -> StoredFile | None:
        return self._by_path.get(file_path)

    def get_file(self, file_id: object) -> StoredFile:
        """``getFile``: the file, or Telegram's errors for an unknown or too big one."""
        stored = self.by_id(file_id)
        if stored is None:
            raise bad_request("invalid file_id")
        if len(stored.data) > MAX_DOWNLOAD:
            raise bad_request("file is too big")
        return stored


def image_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) of an image Pillow can read, or None."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            return image.size
    except (UnidentifiedImageError, OSError, ValueError):
        return None


def check_photo(data: bytes) -> tuple[int, int]:
    """The size of a photo a bot sends, or the error Telegram answers ``sendPhoto`` with."""
    if len(data) > MAX_PHOTO_UPLOAD:
        raise bad_request("PHOTO_SAVE_FILE_INVALID")
    size = image_size(data)
    if size is None:
        raise bad_request("IMAGE_PROCESS_FAILED")
    width, height = size
    if width + height > 10_000 or max(width, height) > 20 * min(width, height):
        raise bad_request("PHOTO_INVALID_DIMENSIONS")
    return size


def photo_sizes(store: FileStore, data: bytes) -> list[dict[str, Any]]:
    """The ``PhotoSize`` list of a photo: JPEG sizes up to 1280 px, smallest first."""
    try:
        with Image.open(io.BytesIO(data)) as opened:
            image = opened.convert("RGB")
    except (UnidentifiedImageError, OSError) as error:
        raise ValueError("a participant's photo must be an image Pillow can read") from error
    longest = max(image.size)
    sides = sorted({side for side in PHOTO_SIDES if side < longest} | {min(longest, 1280)})
    sizes: list[dict[str, Any]] = []
    for side in sides:
        scaled = image.copy()
        scaled.thumbnail((side, side))
        buffer = io.BytesIO()
        scaled.save(buffer, "JPEG", quality=87)
        stored = store.add("photos", buffer.getvalue(), "jpg")
        sizes.append(
            {
                "file_id": stored.file_id,
                "file_unique_id": stored.file_unique_id,
                "file_size": len(stored.data),
                "width": scaled.width,
                "height": scaled.height,
            }
        )
    return sizes
