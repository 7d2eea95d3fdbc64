"""The judges' agreement and biases found where they were planted: a judge that gives the
true value 80 % of the time beside annotators who always do, and a judge that prefers the
conversation shown first."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analytics.annotations.judges import (
    AS_PEOPLE,
    BELOW_PEOPLE,
    judge_findings,
    position_bias,
)
from analytics.annotations.ratings import ItemScale

SCALE = ItemScale("cues", "cues.enjoy", "scale", ("1", "2", "3", "4", "5"),
                  (1.0, 2.0, 3.0, 4.0, 5.0), "ordinal")  # fmt: skip
TARGETS = 300


def planted(judge_right: float, seed: int = 5) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, TARGETS)
    rows = []
    finals = []
    for t, value in enumerate(truth):
        target = f"s{t}"
        for person in ("A1", "A2"):
            rows.append((target, person, str(value), "telegram"))
        said = (
            value
            if rng.random() < judge_right
            else rng.choice([v for v in range(1, 6) if v != value])
        )
        rows.append((target, "model:judge", str(said), "model"))
        finals.append(("j", "cues", "cues.enjoy", "session", target, str(value)))
    ratings = pd.DataFrame(rows, columns=["target", "annotator", "value", "origin"]).assign(
        job="j", level="session", instrument_id="cues", item_id="cues.enjoy", round="first"
    )
    final = pd.DataFrame(
        finals, columns=["job", "instrument_id", "item", "level", "target", "value"]
    )
    return ratings, final


def test_the_planted_agreement_is_found_within_its_interval() -> None:
    ratings, final = planted(0.8)
    found = judge_findings(ratings, final, {("cues", "cues.enjoy"): SCALE})
    assert found is not None
    rows = found.agreement.set_index(["comparison", "with", "statistic"])
    share = rows.loc[("judge-adjudicated", "adjudicated", "percent_agreement")]
    assert share["low"] <= 0.8 <= share["high"]
    assert abs(share["value"] - 0.8) < 0.06
    assert rows.loc[("human-human", "A2", "kappa_linear")]["value"] == 1.0
    [verdict] = found.verdicts.itertuples()
    assert verdict.verdict == BELOW_PEOPLE  # people agree perfectly; the judge does not
    perfect = judge_findings(*planted(1.0), {("cues", "cues.enjoy"): SCALE})
    assert perfect is not None and perfect.verdicts["verdict"].tolist() == [AS_PEOPLE]


def test_the_planted_position_bias_is_found() -> None:
    rng = np.random.default_rng(3)
    rows = []
    for pair in range(200):
        # the judge picks the first shown 70 % of the time in each order
        ab, ba = (("a" if rng.random() < 0.7 else "b") for _ in range(2))
        consistent = ab != ba  # "a" then "b" (or "b" then "a") is the same system
        for order, winner in (("ab", ab), ("ba", ba)):
            reason = (
                "inconsistent"
                if not consistent
                else "model_verdict"
                if order == "ab"
                else "swapped_repeat"
            )
            rows.append((f"j:p{pair}:model:judge:q:{order}", "acute", "model:judge", "model",
                         winner, "q", f"p{pair}", reason, False))  # fmt: skip
        rows.append((f"j:p{pair}:A1:q", "acute", "A1", "annotator", "a" if pair % 2 else "b",
                     "q", f"p{pair}", None, False))  # fmt: skip
    columns = ["vote_id", "source", "rater", "rater_kind", "winner", "question", "session",
               "flag_reason", "onboarding"]  # fmt: skip
    votes = pd.DataFrame(rows, columns=columns)
    found = position_bias(votes).set_index("rater")
    judge = found.loc["model:judge"]
    assert judge["pairs"] == 200
    assert abs(judge["share_first_wins"] - 0.7) < 0.06
    assert judge["first_wins_low"] <= 0.7 <= judge["first_wins_high"]
    assert judge["verdicts"] == 400
    # consistent only when the two orders differ in position: 2 × 0.7 × 0.3 = 0.42
    assert abs(judge["share_consistent"] - 0.42) < 0.08
    assert found.loc["people"]["share_first_wins"] == 0.5


def test_a_judge_that_rewards_length_is_told_apart_from_people() -> None:
    ratings, final = planted(1.0)
    rng = np.random.default_rng(9)
    lengths = {("session", f"s{t}"): float(rng.integers(20, 400)) for t in range(TARGETS)}
    # the judge: longer replies rated higher, whatever people said
    order = sorted(lengths, key=lambda k: lengths[k])
    by_length = {k[1]: str(1 + 5 * i // TARGETS) for i, k in enumerate(order)}
    judged = ratings["annotator"] == "model:judge"
    ratings.loc[judged, "value"] = ratings.loc[judged, "target"].map(by_length)
    found = judge_findings(ratings, final, {("cues", "cues.enjoy"): SCALE}, lengths=lengths)
    assert found is not None
    rho = found.length.set_index("rater")["rho"]
    assert rho["model:judge"] > 0.9
    assert abs(rho["people (mean)"]) < 0.15


def test_many_judged_few_people_gives_a_prediction_powered_mean() -> None:
    ratings, final = planted(0.8)
    truth = final["value"].astype(float).mean()
    few = final.sample(n=100, random_state=1)  # people adjudicated a random third
    people = ratings["annotator"].str.startswith("A") & ~ratings["target"].isin(few["target"])
    found = judge_findings(ratings[~people], few, {("cues", "cues.enjoy"): SCALE})
    assert found is not None
    [row] = found.prediction_powered.to_dict("records")
    assert (row["n_judged"], row["n_people"]) == (TARGETS, 100)
    assert row["low"] <= truth <= row["high"]
    assert row["high"] - row["low"] < row["people_high"] - row["people_low"]


def test_a_judge_that_favours_its_own_family_is_told_apart_from_people() -> None:
    """The judge rates the systems of its family (qwen-bot) one point higher than the truth
    (five at most), the others as people do: its self-preference is found, and nothing is
    said of a judge whose family no system shares."""
    ratings, final = planted(1.0)
    system = {f"s{t}": "qwen-bot" if t % 2 else "gpt-bot" for t in range(TARGETS)}
    ratings = ratings.assign(system=ratings["target"].map(system))
    judged = (ratings["annotator"] == "model:judge") & (ratings["system"] == "qwen-bot")
    ratings.loc[judged, "value"] = [str(min(5, int(v) + 1)) for v in ratings.loc[judged, "value"]]
    truth = final.set_index("target")["value"].astype(float)
    own = [t for t in truth.index if system[t] == "qwen-bot"]
    planted_gap = float((truth[own].clip(upper=4) + 1).mean() - truth[own].mean())
    scales = {("cues", "cues.enjoy"): SCALE}
    families = {"qwen-bot": "qwen", "gpt-bot": "gpt"}
    found = judge_findings(
        ratings, final, scales, judge_families={"model:judge": "qwen"}, system_families=families
    )
    assert found is not None
    [row] = found.self_preference.to_dict("records")
    assert (row["family"], row["own_systems"], row["n_own"], row["n_other"]) == (
        "qwen", "qwen-bot", TARGETS // 2, TARGETS // 2,
    )  # fmt: skip
    assert row["self_preference"] == pytest.approx(planted_gap)
    assert 0 < row["low"] <= planted_gap <= row["high"]
    assert row["people_own"] - row["people_other"] == pytest.approx(
        truth[own].mean() - truth.drop(own).mean()
    )
    unnamed = judge_findings(
        ratings, final, scales, judge_families={"model:judge": "llama"}, system_families=families
    )
    assert unnamed is not None and unnamed.self_preference.empty


def test_a_judge_that_gives_its_own_family_the_win_in_pairs_is_told_apart() -> None:
    rng = np.random.default_rng(4)
    rows = []
    for pair in range(200):
        first, second = ("qwen-bot", "gpt-bot") if pair % 2 else ("gpt-bot", "qwen-bot")
        own = "a" if first == "qwen-bot" else "b"
        other = "b" if own == "a" else "a"
        said = own if rng.random() < 0.8 else other  # the judge: its family 80 % of the time
        rows.append((f"j:p{pair}:model:judge:q:ab", "acute", "model:judge", "model", first,
                     second, said, "q", f"p{pair}", False, "model_verdict", False))  # fmt: skip
        person = own if rng.random() < 0.5 else other  # people: no preference
        rows.append((f"j:p{pair}:A1:q", "acute", "A1", "annotator", first, second, person, "q",
                     f"p{pair}", False, None, False))  # fmt: skip
    columns = ["vote_id", "source", "rater", "rater_kind", "system_a", "system_b", "winner",
               "question", "session", "flagged", "flag_reason", "onboarding"]  # fmt: skip
    votes = pd.DataFrame(rows, columns=columns)
    ratings_columns = ["target", "annotator", "value", "origin", "job", "level",
                       "instrument_id", "item_id", "round"]  # fmt: skip
    no_ratings = pd.DataFrame(columns=ratings_columns)
    found = judge_findings(
        no_ratings,
        pd.DataFrame(columns=["job", "instrument_id", "item", "level", "target", "value"]),
        {},
        votes=votes,
        judge_families={"model:judge": "qwen"},
        system_families={"qwen-bot": "qwen", "gpt-bot": "gpt"},
    )
    assert found is not None
    [row] = found.self_preference.to_dict("records")
    assert (row["level"], row["item"], row["n_own"], row["n_other"]) == ("pair", "q", 200, 200)
    own_won = votes.apply(lambda v: v["winner"] == ("a" if v["system_a"] == "qwen-bot" else "b"),
                          axis=1)  # fmt: skip
    by_judge = own_won[votes["rater"] == "model:judge"].mean()
    assert (row["judge_own"], row["people_own"]) == (
        by_judge,
        own_won[votes["rater"] == "A1"].mean(),
    )
    assert row["low"] <= 0.3 <= row["high"] and row["low"] > 0  # planted: 0.8 against 0.5
