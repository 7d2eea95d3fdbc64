"""What the rated reply recommended, for a job's extra information (XRec questions 11-13).

``demo_catalogue``: the catalogue entries (genres, platforms, price, year, description) of
the demo shop's games the rated system reply names, in the order it names them. They come
with the target (``AnnotationTask.recommended``); the annotators' flow shows them under the
job's heading just before the first item that needs them
(``bot.engine.annotating.information``).
"""

from __future__ import annotations

import re
from dataclasses import replace

from bot.core.annotation import AnnotationTask
from bot.systems.demo.catalogue import CATALOGUE, GENRE_NAMES, PLATFORM_NAMES, Game


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


def informed(task: AnnotationTask | None) -> AnnotationTask | None:
    """``task`` with the entries of what its rated reply (the last exchange) recommends."""
    if task is None:
        return None
    reply = (task.conversation[-1].system_text or "") if task.conversation else ""
    return replace(task, recommended=tuple(catalogue_entry(g) for g in named_games(reply)))
