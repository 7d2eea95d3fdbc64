"""Cohen's kappa between two judges on the items both judged (the language model's
agreement with people), in plain Python: the bot side has no pandas."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from bot.store.stress_records import Judge, StressResult


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Kappa of (first judge, second judge) labels; None with no pairs, 1.0 when both
    judges used one and the same label throughout (they agree and chance cannot tell)."""
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(first[label] * second[label] for label in first) / (n * n)
    if expected == 1.0:
        return 1.0
    return (observed - expected) / (1 - expected)


def model_agreement(results: Sequence[StressResult]) -> tuple[float | None, int]:
    """Cohen's kappa of the model's verdicts with people's, on the replays both judged."""
    pairs = [
        (human.verdict.value, model.verdict.value)
        for r in results
        if (human := r.by(Judge.HUMAN)) is not None and (model := r.by(Judge.LLM)) is not None
    ]
    return cohen_kappa(pairs), len(pairs)
