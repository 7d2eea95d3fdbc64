"""Does a judge of pairs choose as people do? For every ACUTE job and question a model judge
voted on, the judge's verdict on each pair is set against people's majority on the same
pair, as a rating job's judge is set against the adjudicated value:

- a pair is shared when the judge gave a verdict that held in both orders (a verdict that
  flipped with the order names no system: such pairs are counted, ``flipped``, and left
  out) and people's votes on it have a majority (a pair people split evenly is counted,
  ``split``, and left out); onboarding pairs and flagged votes are never used;
- ``agreement``: the share of shared pairs where the judge chose the system people's
  majority chose, with Wilson's 95% interval;
- ``kappa``: Cohen's kappa of the judge's choice and people's majority over the shared
  pairs (which of the two systems won, the systems in name order), with the 95% percentile
  bootstrap interval over pairs that every kappa of the report has
  (``analytics.annotations.agreement``): agreement beyond what each side's own lean toward
  one system would give by chance.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from analytics.annotations import agreement as ag
from analytics.statistics.questionnaires import wilson_interval

MODEL = "model"
PAIR_AGREEMENT_COLUMNS = [
    "job", "question", "judge", "pairs", "agreed", "agreement", "agreement_low",
    "agreement_high", "kappa", "kappa_low", "kappa_high", "flipped", "split",
]  # fmt: skip
"""Per ACUTE job, question and judge: the shared ``pairs``, how many the judge ``agreed``
on with people's majority and its share with Wilson's interval, Cohen's kappa with its
interval, and the pairs left out (``flipped`` verdicts, ``split`` people)."""


def _chosen(votes: pd.DataFrame) -> pd.Series:
    """Per vote: 1.0 when the system first by name won, 0.0 when the other did."""
    a, b = votes["system_a"].astype(str), votes["system_b"].astype(str)
    a_won = votes["winner"].astype(str) == "a"
    return pd.Series(np.where(a_won == (a <= b), 1.0, 0.0), index=votes.index)


def pair_agreement(votes: pd.DataFrame) -> pd.DataFrame:
    """``PAIR_AGREEMENT_COLUMNS`` from the votes frame (``acute`` votes with their target in
    the vote id, ``JOB:TARGET:…``)."""
    acute = votes[(votes["source"].astype(str) == "acute") & ~votes["onboarding"].astype(bool)]
    acute = acute[acute["winner"].astype(str).isin(["a", "b"])]
    if acute.empty:
        return pd.DataFrame(columns=PAIR_AGREEMENT_COLUMNS)
    parts = acute["vote_id"].astype(str).str.split(":")
    acute = acute.assign(job=parts.str[0], target=parts.str[1])
    model = acute["rater_kind"].astype(str) == MODEL
    reason = acute["flag_reason"].astype(str)
    people = acute[~model & ~acute["flagged"].astype(bool)]
    rows = []
    for (job, question), mine in acute[model].groupby(["job", "question"], sort=True):
        theirs = people[(people["job"] == job) & (people["question"] == question)]
        if theirs.empty:
            continue
        share = _chosen(theirs).groupby(theirs["target"]).mean()
        majority = share[share != 0.5].round()
        for judge, given in mine.groupby("rater", sort=True):
            flipped = set(given[reason.loc[given.index] == "inconsistent"]["target"])
            verdicts = given[reason.loc[given.index] == "model_verdict"]
            choice = _chosen(verdicts).groupby(verdicts["target"]).first()
            choice = choice.drop(list(flipped & set(choice.index)))
            shared = choice.index.intersection(majority.index)
            asked = set(choice.index) | flipped
            agreed = int((choice[shared] == majority[shared]).sum())
            low, high = wilson_interval(agreed, len(shared)) if len(shared) else (math.nan,) * 2
            pair = np.vstack([choice[shared].to_numpy(float), majority[shared].to_numpy(float)])
            kappa, kappa_low, kappa_high, _ = ag.cohen_kappa(pair, (0.0, 1.0))
            rows.append(
                {"job": job, "question": question, "judge": judge, "pairs": len(shared),
                 "agreed": agreed,
                 "agreement": agreed / len(shared) if len(shared) else math.nan,
                 "agreement_low": low, "agreement_high": high, "kappa": kappa,
                 "kappa_low": kappa_low, "kappa_high": kappa_high,
                 "flipped": len(flipped & set(share.index)),
                 "split": len((asked - flipped) & set(share[share == 0.5].index))}
            )  # fmt: skip
    return pd.DataFrame(rows, columns=PAIR_AGREEMENT_COLUMNS)
