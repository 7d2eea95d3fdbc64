"""The extra information an annotation item needs (XRec questions 11-13: what was
recommended), made from the target itself: pure, no I/O.

``demo_catalogue``: the catalogue entries (genres, platforms, price, year, description) of
the demo shop's games the rated system reply names, in the order it names them. The
annotators' flow shows it, under the job's heading, just before the first item that needs it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.store.model import TranscriptExchange
from bot.systems.demo.catalogue import CATALOGUE, GENRE_NAMES, PLATFORM_NAMES, Game
from scenarios.jobs import AnnotationJob, ExtraInformation

NOTHING_FOUND = "The response names no item whose information is known."


def information_for(job: AnnotationJob, item_id: str) -> ExtraInformation | None:
    """The extra information shown before ``item_id``, when it is the first item to need it."""
    for extra in job.extra_information:
        if extra.items and extra.items[0] == item_id:
            return extra
    return None


def named_games(text: str) -> list[Game]:
    """The catalogue's games ``text`` names (whole titles, any case), in order of mention."""
    found: list[tuple[int, Game]] = []
    for game in CATALOGUE:
        match = re.search(rf"(?<!\w){re.escape(game.title)}(?!\w)", text, re.IGNORECASE)
        if match:
            found.append((match.start(), game))
    return [game for _, game in sorted(found, key=lambda pair: pair[0])]


def catalogue_entry(game: Game) -> str:
    genres = ", ".join(GENRE_NAMES[g] for g in game.genres)
    platforms = ", ".join(PLATFORM_NAMES[p] for p in game.platforms)
    return (
        f"{game.title} ({game.year}): {game.description} Genres: {genres}. "
        f"Platforms: {platforms}. Price: €{game.price:.2f}."
    )


def extra_text(extra: ExtraInformation, conversation: Sequence[TranscriptExchange]) -> str:
    """The information for the rated exchange (the last of ``conversation``), headed."""
    reply = (conversation[-1].system_text or "") if conversation else ""
    entries = [catalogue_entry(game) for game in named_games(reply)]  # demo_catalogue
    body = "\n\n".join(entries) if entries else NOTHING_FOUND
    return f"{extra.heading}\n\n{body}"
