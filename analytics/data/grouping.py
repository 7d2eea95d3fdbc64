"""Grouping a million answers by several categorical columns at the cost of one integer.

pandas groups by several categoricals by combining and then factorizing their codes on
every ``groupby``; combining them once into one integer per row (``group_key``) and
grouping by that gives the same groups, in the same order, several times faster.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd


def group_key(frame: pd.DataFrame, keys: Sequence[str]) -> np.ndarray:
    """One integer per row that groups and sorts as ``keys`` do (their category codes,
    none missing, combined): ``pd.factorize(key, sort=True)`` numbers the groups as
    ``groupby(keys)`` orders them, without ``sort`` as ``groupby(keys, sort=False)``."""
    key = np.zeros(len(frame), dtype=np.int64)
    for name in keys:
        level = pd.Categorical(frame[name])
        key = key * (len(level.categories) + 1) + level.codes.astype(np.int64) + 1
    return key


def sorted_groups(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows in ``key``'s order (a stable sort) and where each group starts in it, so
    that ``np.<ufunc>.reduceat(values[order], starts)`` reduces each group, the groups in
    the order ``groupby`` sorts them. Answers are stored set by set: the sort meets runs
    already in order and costs little, where a ``groupby`` hashes every row again."""
    order = np.argsort(key, kind="stable")
    ordered = key[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if len(key) else order
    return order, starts
