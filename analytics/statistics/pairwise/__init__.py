"""Pairwise comparisons: Bradley–Terry scores with rater-bootstrap and sandwich intervals,
ranks, win rates and the rest of the report's pairwise section (docs/pairwise.md)."""

from analytics.statistics.pairwise.analysis import (
    Pairwise,
    PairwiseOptions,
    pairwise_from_study,
    pairwise_section,
)

__all__ = [
    "Pairwise",
    "PairwiseOptions",
    "pairwise_from_study",
    "pairwise_section",
]
