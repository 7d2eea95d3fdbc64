"""Does a judge prefer the side of a pair that says more, and more than people do?

Judges of pairs are known to favour the longer answer. For every pairwise question a model
judge voted on (an ACUTE job's pairs of conversations, or side-by-side turns' pairs of
replies), each rater's decided votes (a or b) are set against the characters each side
said: the whole conversation's replies (ACUTE), or the one reply (side by side). Per judge,
and for people's votes on the same pairs:

- ``share_longer``: of the votes where one side said more, the share won by that side (0.5:
  no preference), pair by pair and then averaged over pairs, with Wilson's 95% interval
  over pairs (a judge votes twice a pair, once in each order, so that where a side was
  shown does not count; people may vote on a pair several times: a pair counts once);
- ``rho``: Spearman's rho of the vote (1 when A won) with A's characters less B's, over
  every decided vote whose sides' lengths are known, with a 95% percentile bootstrap
  interval that resamples pairs (above 0: the longer side wins more often).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from analytics.annotations import agreement as ag

MODEL = "model"
PEOPLE = "people"
PAIR_LENGTH_COLUMNS = [
    "source", "job", "question", "rater", "pairs", "verdicts", "longer", "share_longer",
    "low", "high", "rho", "rho_low", "rho_high", "n",
]  # fmt: skip
"""Per source (``acute``, ``side_by_side``), job (None for side by side), question and
rater (a judge's pseudonym, or ``people``): ``verdicts`` the votes where one side said more
and ``pairs`` the pairs they are on, ``longer`` how many of them the longer side won and
``share_longer`` its share (pair by pair, averaged), with its interval (``low``, ``high``);
``rho`` with its interval over ``n`` decided votes (equal lengths too)."""
PAIRED = ("acute", "side_by_side")


def pair_length_bias(votes: pd.DataFrame, said: Mapping[tuple[str, str], float]) -> pd.DataFrame:
    """Each judge's and people's preference for the side that said more (module docstring).

    ``votes``: the votes frame; ``said``: (where, system) -> the characters the system said
    there, ``where`` a stored conversation's session id (ACUTE) or ``session#turn`` (a
    side-by-side turn)."""
    decided = votes[
        votes["source"].astype(str).isin(PAIRED)
        & ~votes["onboarding"].astype(bool)
        & votes["winner"].astype(str).isin(["a", "b"])
    ]
    by_model = decided[decided["rater_kind"].astype(str) == MODEL]
    if by_model.empty:
        return _none()
    asked = set(zip(by_model["source"].astype(str), by_model["question"].astype(str), strict=True))
    keys = zip(decided["source"].astype(str), decided["question"].astype(str), strict=True)
    sized = _sized(decided[[key in asked for key in keys]], said)
    rows: list[dict[str, object]] = []
    for (source, job, question), part in sized.groupby(
        ["source", "job", "question"], sort=True, dropna=False
    ):
        model = part["rater_kind"] == MODEL
        if not model.any():
            continue
        judged = set(part.loc[model, "pair"])
        people = part[~model & ~part["flagged"] & part["pair"].isin(judged)]
        raters = [(str(r), mine) for r, mine in part[model].groupby("rater", sort=True)]
        raters.append((PEOPLE, people))
        where = {
            "source": source,
            "job": job if isinstance(job, str) else None,
            "question": question,
        }
        for rater, mine in raters:
            if len(mine):
                rows.append({**where, "rater": rater, **_preference(mine)})
    return pd.DataFrame(rows, columns=PAIR_LENGTH_COLUMNS) if rows else _none()


def _none() -> pd.DataFrame:
    return pd.DataFrame(columns=PAIR_LENGTH_COLUMNS)


def _sized(votes: pd.DataFrame, said: Mapping[tuple[str, str], float]) -> pd.DataFrame:
    """The votes whose two sides' lengths are known, with ``job``, ``pair`` (the same for
    both orders of a pair), ``length_a`` and ``length_b``."""
    rows = []
    for vote in votes.to_dict("records"):
        a, b = str(vote["system_a"]), str(vote["system_b"])
        session = str(vote["session"])
        if vote["source"] == "acute":
            shown = session.split("~")
            if len(shown) != 2:
                continue
            job: str | None = str(vote["vote_id"]).split(":")[0]
            pair = "~".join(sorted(shown))
            length_a = _first(said.get((s, a)) for s in shown)
            length_b = _first(said.get((s, b)) for s in shown)
        else:
            turn = vote["turn"]
            if pd.isna(turn):
                continue
            job, pair = None, f"{session}#{int(turn)}"
            length_a, length_b = said.get((pair, a)), said.get((pair, b))
        if length_a is None or length_b is None:
            continue
        rows.append(
            {"source": vote["source"], "job": job, "question": vote["question"],
             "rater": vote["rater"], "rater_kind": str(vote["rater_kind"]),
             "flagged": bool(vote["flagged"]), "pair": pair, "a_won": vote["winner"] == "a",
             "length_a": float(length_a), "length_b": float(length_b)}
        )  # fmt: skip
    columns = ["source", "job", "question", "rater", "rater_kind", "flagged", "pair", "a_won",
               "length_a", "length_b"]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def _first(found: Iterable[float | None]) -> float | None:
    return next((f for f in found if f is not None), None)


def _preference(votes: pd.DataFrame) -> dict[str, object]:
    """The share of votes won by the longer side, pair by pair, with a Wilson interval
    over pairs; rho of the vote with the length difference with a bootstrap interval over
    pairs."""
    pairs, of_pair = np.unique(votes["pair"].to_numpy(str), return_inverse=True)
    a_won = votes["a_won"].to_numpy(bool)
    difference = (votes["length_a"] - votes["length_b"]).to_numpy(float)
    unequal = difference != 0
    longer = unequal & (a_won == (difference > 0))
    asked = np.bincount(of_pair, weights=unequal, minlength=len(pairs))
    won = np.bincount(of_pair, weights=longer, minlength=len(pairs))
    decided = asked > 0
    share = float((won[decided] / asked[decided]).mean()) if decided.any() else math.nan
    low, high = _wilson(share, int(decided.sum()))
    rho = _spearman(a_won.astype(float), difference)
    rhos = []
    rng = np.random.default_rng(ag.SEED)
    for _ in range(ag.RESAMPLES if not math.isnan(rho) else 0):
        drawn = np.bincount(rng.integers(0, len(pairs), len(pairs)), minlength=len(pairs))
        picked = np.repeat(np.arange(len(votes)), drawn[of_pair])
        rhos.append(_spearman(a_won[picked].astype(float), difference[picked]))
    rho_low, rho_high = _interval(rhos, len(pairs))
    return {
        "pairs": int(decided.sum()), "verdicts": int(unequal.sum()),
        "longer": int(longer.sum()), "share_longer": share, "low": low, "high": high,
        "rho": rho, "rho_low": rho_low, "rho_high": rho_high, "n": len(votes),
    }  # fmt: skip


def _wilson(share: float, n: int) -> tuple[float, float]:
    """Wilson's score interval (95%) of a share over ``n`` pairs: a judge's two verdicts on
    a pair, or several people's votes on it, are not independent, so a pair counts once."""
    if n == 0 or math.isnan(share):
        return (math.nan, math.nan)
    z = 1.959963984540054
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n))
    return (min(share, max(0.0, centre - half)), max(share, min(1.0, centre + half)))


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 4:
        return math.nan
    rx, ry = rankdata(x), rankdata(y)
    if rx.std() == 0 or ry.std() == 0:
        return math.nan
    return float(np.corrcoef(rx, ry)[0, 1])


def _interval(draws: list[float], pairs: int) -> tuple[float, float]:
    """A 95% percentile interval of ``draws``; none from fewer than two pairs, or when
    most resamples had no value."""
    values = np.array(draws, dtype=float)
    values = values[~np.isnan(values)]
    if pairs < 2 or len(values) < ag.RESAMPLES / 2:
        return (math.nan, math.nan)
    tail = (1 - ag.CONFIDENCE) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return (float(low), float(high))
