"""How a questionnaire item looks in a chat: its text, its buttons, and the button data.

Button data is short (Telegram allows 64 bytes) and carries ``asked``, the number of the
showing, so a tap on an old or repeated button is recognised and never stored twice.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.engine.effects import Buttons
from questionnaires.models import Item, Questionnaire, ScaleItem
from scenarios.models import Texts

_MAX_LABEL_ON_BUTTON = 24

CONSENT_YES = "c:y"
CONSENT_NO = "c:n"
FINISH = "done"


@dataclass(frozen=True)
class Tap:
    """A decoded questionnaire button: answer, skip or examples."""

    action: str  # "a" | "s" | "h"
    asked: int
    value: int | None = None


def answer_data(asked: int, value: int) -> str:
    return f"a:{asked}:{value}"


def parse_tap(data: str) -> Tap | None:
    """Decode button data; ``None`` for anything that is not a questionnaire button."""
    parts = data.split(":")
    try:
        if parts[0] == "a" and len(parts) == 3:
            return Tap("a", int(parts[1]), int(parts[2]))
        if parts[0] in ("s", "h") and len(parts) == 2:
            return Tap(parts[0], int(parts[1]))
    except ValueError:
        return None
    return None


def progress(questionnaire: Questionnaire, item_index: int) -> str:
    """ "2/4" among the rating items; free-text items are not counted."""
    rated = [i for i, item in enumerate(questionnaire.items) if isinstance(item, ScaleItem)]
    if item_index in rated:
        return f"{rated.index(item_index) + 1}/{len(rated)}"
    return ""


def render_item(
    questionnaire: Questionnaire, item_index: int, asked: int, texts: Texts
) -> tuple[str, Buttons]:
    item: Item = questionnaire.items[item_index]
    counter = progress(questionnaire, item_index)
    heading = f"{questionnaire.title} · {counter}" if counter else questionnaire.title
    lines = [heading, "", item.text]
    rows: list[tuple[tuple[str, str], ...]] = []
    if isinstance(item, ScaleItem):
        points = range(item.min, item.max + 1)
        if all(len(item.label(v)) <= _MAX_LABEL_ON_BUTTON for v in points):
            rows.extend(((f"{v} · {item.label(v)}", answer_data(asked, v)),) for v in points)
        else:
            lines.append("")
            lines.extend(f"{v} = {item.label(v)}" for v in points)
            rows.append(tuple((str(v), answer_data(asked, v)) for v in points))
    else:
        lines.append("")
        lines.append(f"(Type your answer, up to {item.max_length} characters.)")
    extra: list[tuple[str, str]] = []
    if item.help:
        extra.append((texts.examples_button, f"h:{asked}"))
    if not item.required:
        extra.append((texts.skip_button, f"s:{asked}"))
    if extra:
        rows.append(tuple(extra))
    return "\n".join(lines), tuple(rows)
