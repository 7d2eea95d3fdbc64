"""One integer per row groups like several categorical columns, in groupby's order."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics.data.grouping import group_key, sorted_groups


def _frame(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = 500
    frame = pd.DataFrame(
        {
            "participant": rng.choice(["p9", "p1", "p5", "p3"], rows),
            "scope": rng.choice(["s#turn10", "s#turn2", "s", "study"], rows),
            "item": rng.choice(["q.b", "q.a", "r.c"], rows),
            "value": rng.integers(1, 6, rows).astype(float),
        }
    )
    for name in ("participant", "scope", "item"):
        categories = sorted(set(frame[name]), reverse=seed % 2 == 1)  # any category order
        frame[name] = pd.Categorical(frame[name], categories=categories)
    return frame


def test_sorted_it_numbers_groups_as_groupby_orders_them() -> None:
    for seed in range(6):
        frame = _frame(seed)
        keys = ["participant", "scope", "item"]
        expected = frame.groupby(keys, observed=True)["value"].agg(["size", "mean"])
        numbered = pd.factorize(group_key(frame, keys), sort=True)[0]
        found = frame.groupby(numbered)["value"].agg(["size", "mean"])
        assert (found.to_numpy() == expected.to_numpy()).all()
        firsts = frame.groupby(numbered)[keys].first()
        assert list(firsts.itertuples(index=False, name=None)) == list(expected.index)


def test_unsorted_it_numbers_groups_in_the_order_they_first_appear() -> None:
    frame = _frame(7)
    keys = ["scope", "participant"]
    expected = frame.groupby(keys, observed=True, sort=False)["value"].sum()
    numbered = pd.factorize(group_key(frame, keys))[0]
    found = frame.groupby(numbered)["value"].sum()
    assert found.tolist() == expected.tolist()
    assert list(frame.groupby(numbered)[keys].first().itertuples(index=False, name=None)) == list(
        expected.index
    )


def test_sorted_groups_reduce_each_group_in_groupbys_order() -> None:
    for seed in range(4):
        frame = _frame(seed)
        keys = ["participant", "scope", "item"]
        expected = frame.groupby(keys, observed=True)["value"].agg(["size", "sum", "min"])
        order, starts = sorted_groups(group_key(frame, keys))
        values = frame["value"].to_numpy()[order]
        assert np.diff(np.r_[starts, len(order)]).tolist() == expected["size"].tolist()
        assert np.add.reduceat(values, starts).tolist() == expected["sum"].tolist()
        assert np.minimum.reduceat(values, starts).tolist() == expected["min"].tolist()
        firsts = frame.iloc[order[starts]][keys]
        assert list(firsts.itertuples(index=False, name=None)) == list(expected.index)


def test_sorted_groups_of_no_rows_are_none() -> None:
    order, starts = sorted_groups(np.zeros(0, dtype=np.int64))
    assert len(order) == 0 and len(starts) == 0
