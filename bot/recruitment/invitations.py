"""Single-use invitation codes for lab and classroom studies (``ozlab invite``): codes a
person can read out or type, stored in the study database, and a CSV of deep links to
hand out. The command runs without Telegram, so the bot's username is given."""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Sequence
from pathlib import Path

from bot.core.errors import StudyDataError
from bot.core.researcher_files import private_file, write_rows
from bot.store.interface import Recruitment

_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O or 1/I to misread on paper
_LENGTH = 10  # 32**10: guessing a code is hopeless
_BOT_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{3,31}")

Choose = Callable[[Sequence[str]], str]
"""Draws one character of a code: ``secrets.choice`` for every real invitation; a seeded
``random.Random(...).choice`` only where a simulation must write the same database twice."""


def bot_username(name: str) -> str:
    """The bot's username as a link needs it (``@`` dropped), or a one-line error."""
    bare = name.removeprefix("@")
    if not _BOT_NAME.fullmatch(bare) or not bare.lower().endswith("bot"):
        raise StudyDataError(
            f"--bot {name!r} is not a Telegram bot username (5 to 32 letters, digits or _,"
            " ending in 'bot', as @BotFather gave it)"
        )
    return bare


def new_code(choose: Choose = secrets.choice) -> str:
    return "".join(choose(_ALPHABET) for _ in range(_LENGTH))


def deep_link(bot: str, code: str) -> str:
    return f"https://t.me/{bot}?start={code}"


def check_out(out: Path, count: int) -> None:
    """Refuse before anything is stored: an overwritten file's codes would stay valid
    with nobody holding them."""
    if count < 1:
        raise StudyDataError(f"--n {count}: give how many invitations to make (1 or more)")
    if out.exists():
        raise StudyDataError(f"{out} exists already: give another --out")
    if not out.parent.is_dir():
        raise StudyDataError(f"there is no folder {out.parent}: give another --out")


async def new_invitations(store: Recruitment, count: int) -> list[str]:
    """``count`` codes new to the store (one it holds already is made again)."""
    codes: list[str] = []
    while len(codes) < count:
        codes += await store.add_invitations([new_code() for _ in range(count - len(codes))])
    return codes


def write_invitations(codes: list[str], bot: str, out: Path) -> None:
    """The codes are live: whoever reads the file can take a participant's place."""
    with private_file(out) as handle:
        write_rows(handle, ["code", "link"], ((code, deep_link(bot, code)) for code in codes))
