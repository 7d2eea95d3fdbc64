"""An interval for a mean that cannot leave its range (a rating scale's ends, a win rate's
0 to 1, a mean rank's 1 to k): normal (or Student's t) on the logit of the mean's place in
the range, by the delta method, and mapped back, so that both ends stay inside. An
estimate on an end of the range has no logit: its interval is the untransformed one, cut at
the range."""

from __future__ import annotations

import math

from scipy.special import expit, logit

METHOD = (
    "normal (or Student's t) on the logit of the mean's place in its range, by the delta "
    "method, so that it stays inside the range; an estimate on an end: the untransformed "
    "interval cut there"
)


def bounded_interval(value: float, half: float, bounds: tuple[float, float]) -> tuple[float, float]:
    """``value`` ± ``half`` (the untransformed half-width, a quantile times the standard
    error) as ``METHOD`` says; NaN for NaN."""
    low, high = bounds
    if math.isnan(value) or math.isnan(half):
        return math.nan, math.nan
    width = high - low
    place = (value - low) / width if width > 0 else 0.5
    if width <= 0 or not 0 < place < 1:
        return max(low, value - half), min(high, value + half)
    spread = half / (width * place * (1 - place))
    centre = float(logit(place))
    return low + width * float(expit(centre - spread)), low + width * float(expit(centre + spread))
