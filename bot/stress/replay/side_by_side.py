"""Two replies side by side in a plain terminal, for a person to judge.

The utterances are participants' and the replies systems': shown with their control
characters as escapes, so that what a terminal would obey is read instead.
"""

from __future__ import annotations

import textwrap

from bot.core.visible_text import visible
from bot.store.stress_records import ReplyTaken, StressResult


def _lines(taken: ReplyTaken, width: int) -> list[str]:
    if taken.error is not None:
        return textwrap.wrap(f"(the system failed: {visible(taken.error)})", width) or [""]
    out: list[str] = []
    for text in taken.texts or ("(no reply)",):
        for paragraph in visible(text, lines=True).splitlines() or [""]:
            out += textwrap.wrap(paragraph, width) or [""]
    if taken.events:
        out += textwrap.wrap("events: " + visible(", ".join(sorted(taken.events))), width)
    return out


def side_by_side(result: StressResult, width: int = 100) -> str:
    """The test (original and perturbed utterance) and both replies in two columns."""
    test, replay = result.test.perturbation, result.replay
    column = max(20, (width - 7) // 2)
    left, right = _lines(replay.baseline, column), _lines(replay.perturbed, column)
    rows = max(len(left), len(right))
    left += [""] * (rows - len(left))
    right += [""] * (rows - len(right))
    rule = "-" * column
    head = (
        f"test {result.test.id} · {test.stress_type.value} {test.stress_type.title}"
        f" · {visible(replay.system_id)} · session {visible(test.session_id)}, turn {test.turn}"
    )
    return "\n".join(
        [
            head,
            f"  original : {visible(test.original)}",
            f"  perturbed: {visible(test.perturbed)}",
            f"+-{rule}-+-{rule}-+",
            f"| {'unchanged':<{column}} | {'perturbed':<{column}} |",
            f"+-{rule}-+-{rule}-+",
            *(f"| {a:<{column}} | {b:<{column}} |" for a, b in zip(left, right, strict=True)),
            f"+-{rule}-+-{rule}-+",
        ]
    )
