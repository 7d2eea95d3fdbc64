"""Known-answer tests of the report's statistics: published values, hand computations, and
the same numbers again after a trip through a real study database."""

from __future__ import annotations

# pingouin, the reference, is imported by the tests that compare with it: at the top it
# cost every test process a third of a second of collection.
import math
from importlib.resources import files
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from analytics.data.loading import load_study_data
from analytics.statistics.questionnaires import (
    ALL_SYSTEMS,
    compare_systems,
    construct_reliability,
    construct_scores,
    describe_items,
    idial_summary,
    rater_agreement,
    ratings_by_turn,
    wilson_interval,
)
from bot.core.vocabulary import AnswerStatus, Consent, Moment
from bot.engine import effects as fx
from bot.store.definition import definition_json
from bot.store.model import StepCommit
from bot.store.sqlite import open_store
from scenarios.models import StudyBundle

# --- Wilson interval ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [
        # Newcombe RG (1998), "Two-sided confidence intervals for the single proportion:
        # comparison of seven methods", Statistics in Medicine 17:857-872, Table II,
        # method 3 (Wilson score interval without continuity correction).
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0000, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_interval_matches_newcombe_1998(
    successes: int, n: int, low: float, high: float
) -> None:
    got = wilson_interval(successes, n)
    assert got == (pytest.approx(low, abs=5e-5), pytest.approx(high, abs=5e-5))


def test_wilson_interval_edges() -> None:
    assert all(math.isnan(v) for v in wilson_interval(0, 0))
    low, high = wilson_interval(20, 20)
    assert high == 1.0 and low == pytest.approx(1 - 0.1611, abs=5e-5)  # mirror of 0/20
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


@pytest.mark.parametrize("n", range(1, 101))
def test_wilson_interval_holds_its_rate_exactly(n: int) -> None:
    """All or none: the bound at the rate is the rate itself, not a rounding error beside it
    (10 of 10 gave 0.9999999999999999, and a negative error bar crashed matplotlib)."""
    for successes in range(n + 1):
        low, high = wilson_interval(successes, n)
        assert low <= successes / n <= high
    assert wilson_interval(n, n)[1] == 1.0
    assert wilson_interval(0, n)[0] == 0.0


# --- Comparisons ------------------------------------------------------------------------


def _long(groups: dict[str, list[float]], paired: bool = False) -> pd.DataFrame:
    rows = [
        {"participant_id": f"p{i}" if paired else f"{g}{i}", "system_id": g, "score": v}
        for g, values in groups.items()
        for i, v in enumerate(values)
    ]
    return pd.DataFrame(rows)


def test_mann_whitney_u_matches_the_tortoise_and_the_hare() -> None:
    """Wikipedia, "Mann-Whitney U test", Illustration of calculation methods: 6 tortoises
    and 6 hares finish in the order T H H H H H T T T T T H; counting by hand, tortoises beat
    hares 6+1+1+1+1+1 = 11 times (U_T = 11), hares beat tortoises 5·5 = 25 times (U_H = 25).
    The dv is the finishing place, so U of "hare" counts the pairs where the hare placed
    later, i.e. U_T = 11; the rank-biserial r = 2·11/36 − 1 = −0.389 (Wendt 1972)."""
    import pingouin as pg

    order = "THHHHHTTTTTH"
    places = {
        "hare": [i + 1 for i, a in enumerate(order) if a == "H"],
        "tortoise": [i + 1 for i, a in enumerate(order) if a == "T"],
    }
    (row,) = compare_systems(_long(places)).to_dict("records")
    assert (row["test"], row["design"], row["groups"]) == (
        "Mann–Whitney U",
        "between",
        "hare vs tortoise",
    )
    assert row["n_per_group"] == {"hare": 6, "tortoise": 6}
    assert row["statistic"] == 11.0
    assert 6 * 6 - row["statistic"] == 25.0
    assert row["effect"] == pytest.approx(2 * 11 / 36 - 1)
    # The same numbers as pingouin's mwu, which builds the full comparison matrix.
    reference = pg.mwu(places["hare"], places["tortoise"]).iloc[0]
    assert row["p"] == pytest.approx(reference["p_val"])
    assert row["effect"] == pytest.approx(reference["RBC"])
    assert row["note"] is None


def test_kruskal_wallis_matches_hollander_wolfe() -> None:
    """Hollander & Wolfe (1973), Nonparametric Statistical Methods, p. 116 (R's
    ``kruskal.test`` example): mucociliary efficiency in three groups gives
    Kruskal-Wallis chi-squared = 0.77143, df = 2, p-value = 0.68. ε² = H/(n − 1) = H/13."""
    groups = {
        "normal": [2.9, 3.0, 2.5, 2.6, 3.2],
        "obstructive": [3.8, 2.7, 4.0, 2.4],
        "asbestosis": [2.8, 3.4, 3.7, 2.2, 2.0],
    }
    table = compare_systems(_long(groups), min_n=4)
    omnibus = table[table["kind"] == "omnibus"].iloc[0]
    assert omnibus["test"] == "Kruskal–Wallis H"
    assert omnibus["statistic"] == pytest.approx(0.77143, abs=5e-6)
    assert omnibus["p"] == pytest.approx(0.68, abs=0.005)
    assert omnibus["effect"] == pytest.approx(0.77143 / 13, abs=1e-6)
    pairs = table[table["kind"] == "pairwise"]
    assert len(pairs) == 3 and set(pairs["test"]) == {"Mann–Whitney U"}
    # Holm: the smallest p times 3, then times 2, then as is, kept monotone and ≤ 1.
    p = np.sort(pairs["p"].to_numpy())
    holm = np.minimum(1, np.maximum.accumulate(p * np.array([3, 2, 1])))
    assert np.sort(pairs["p_holm"].to_numpy()) == pytest.approx(holm)


def test_wilcoxon_matches_hollander_wolfe() -> None:
    """Hollander & Wolfe (1973), p. 29 (R's ``wilcox.test`` example): Hamilton depression
    scale at first (x) and second (y) visit of 9 patients; V = 40 (sum of the positive
    ranks), exact two-sided p = 0.03906. pingouin reports W = min(V, 45 − V) = 5; the
    matched-pairs rank-biserial r = (40 − 5)/45 = 0.778 (Kerby 2014)."""
    x = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30]
    y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29]
    (row,) = compare_systems(_long({"a-first": x, "b-second": y}, paired=True)).to_dict("records")
    assert (row["test"], row["design"]) == ("Wilcoxon signed-rank", "within")
    assert row["n_per_group"] == {"a-first": 9, "b-second": 9} and row["n_total"] == 9
    assert row["statistic"] == 5.0
    assert row["p"] == pytest.approx(0.03906, abs=5e-6)
    assert row["effect"] == pytest.approx(35 / 45)


ROUNDING_TIMES = [
    (5.40, 5.50, 5.55), (5.85, 5.70, 5.75), (5.20, 5.60, 5.50), (5.55, 5.50, 5.40),
    (5.90, 5.85, 5.70), (5.45, 5.55, 5.60), (5.40, 5.40, 5.35), (5.45, 5.50, 5.35),
    (5.25, 5.15, 5.00), (5.85, 5.80, 5.70), (5.25, 5.20, 5.10), (5.65, 5.55, 5.45),
    (5.60, 5.35, 5.45), (5.05, 5.00, 4.95), (5.50, 5.50, 5.40), (5.45, 5.55, 5.50),
    (5.55, 5.55, 5.35), (5.45, 5.50, 5.55), (5.50, 5.45, 5.25), (5.65, 5.60, 5.40),
    (5.70, 5.65, 5.55), (6.30, 6.30, 6.25),
]  # fmt: skip


def test_friedman_matches_hollander_wolfe() -> None:
    """Hollander & Wolfe (1973), p. 140ff (R's ``friedman.test`` example, RoundingTimes):
    22 players, 3 ways of rounding first base; Friedman chi-squared = 11.143, df = 2,
    p-value = 0.003805. Kendall's W = Q / (n (k − 1)) = 11.143 / 44 = 0.2532."""
    columns = list(zip(*ROUNDING_TIMES, strict=True))
    groups = {"narrow": columns[1], "round": columns[0], "wide": columns[2]}
    table = compare_systems(_long(groups, paired=True))
    omnibus = table.iloc[0]
    assert (omnibus["test"], omnibus["kind"], omnibus["n_total"]) == ("Friedman", "omnibus", 22)
    assert omnibus["statistic"] == pytest.approx(11.143, abs=5e-4)
    assert omnibus["p"] == pytest.approx(0.003805, abs=5e-7)
    assert omnibus["effect"] == pytest.approx(11.142857 / 44, abs=1e-6)
    assert list(table["kind"]) == ["omnibus", "pairwise", "pairwise", "pairwise"]
    assert (table["p_holm"] >= table["p"] - 1e-12).all()


def test_too_few_or_identical_answers_give_a_note_and_no_p_value() -> None:
    few = compare_systems(_long({"a": [1, 2, 3, 4], "b": [2, 3, 4, 5, 5, 4]}))
    assert math.isnan(few.iloc[0]["p"])
    assert few.iloc[0]["note"].startswith("too few participants: a has 4")
    same = compare_systems(_long({"a": [3] * 6, "b": [3] * 6}))
    assert math.isnan(same.iloc[0]["p"]) and "every answer is 3" in same.iloc[0]["note"]
    alone = compare_systems(_long({"a": [1, 2, 3, 4, 5]}))
    assert alone.iloc[0]["note"] == "only one system (a)"
    tied = compare_systems(_long({"a": [1, 2, 3, 4, 5], "b": [1, 2, 3, 4, 5]}, paired=True))
    assert "rated both systems the same" in tied.iloc[0]["note"]


def test_the_unit_is_the_participant() -> None:
    """Three answers of one participant about one system weigh as one."""
    data = _long({"a": [1, 2, 3, 4, 5], "b": [3, 4, 5, 6, 7]})
    repeated = pd.concat([data, data.assign(score=data["score"] + 0.5)], ignore_index=True)
    (row,) = compare_systems(repeated).to_dict("records")
    assert row["n_per_group"] == {"a": 5, "b": 5}


# --- Through a real database -----------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def _scale(item_id: str, construct: str | None, low: int, high: int, **extra) -> dict:
    labels = {v: f"point {v}" for v in range(low, high + 1)}
    return {"type": "scale", "id": item_id, "text": f"Statement {item_id}.", "min": low,
            "max": high, "labels": labels, "construct": construct, **extra}  # fmt: skip


def _bundle(questionnaires: dict, post_task=(), post_study=(), systems=("s1",)) -> StudyBundle:
    return StudyBundle.model_validate(
        {
            "study": {
                "id": "known",
                "title": "Known answers",
                "texts": {"welcome": "Hi", "consent": "Agree?", "declined": "Bye"},
                "systems": [{"type": "demo", "id": s} for s in systems],
                "scenarios": ["task"],
                "post_study": list(post_study),
            },
            "scenarios": {
                "task": {
                    "id": "task",
                    "title": "Task",
                    "brief": "Do it.",
                    "post_task": list(post_task),
                }
            },
            "questionnaires": questionnaires,
        }
    )


async def _write(db: Path, bundle: StudyBundle, steps: list[tuple[str, list[fx.Record]]]) -> None:
    """Rows written the way the bot writes them: open_store runs the real migrations."""
    clock = Clock()
    store = await open_store(db, clock)
    try:
        await store.record_definition(bundle.study.id, definition_json(bundle))
        for participant, records in steps:
            clock.now += 10
            consent = fx.RecordConsent(Consent.ACCEPTED)
            await store.commit_step(
                StepCommit(bundle.study.id, participant, "{}", None, None, (consent, *records))
            )
    finally:
        await store.close()


def _answers(session: str | None, q_id: str, values: dict[str, int], **extra) -> list[fx.Record]:
    """Answers as the engine records them, at the moment their fields say."""
    if "stimulus_id" in extra:
        moment = Moment.RATING
    elif "turn" in extra:
        moment = Moment.EXCHANGE
    else:
        moment = Moment.POST_STUDY if session is None else Moment.POST_TASK
    return [
        fx.RecordResponse(
            session, q_id, item, v, None, None, AnswerStatus.ANSWERED, 990.0, moment, **extra
        )
        for item, v in values.items()
    ]


# Questionnaire ratings of 15 subjects on 10 items (1-7), the dataset "cronbach_alpha"
# shipped with pingouin (source: www.real-statistics.com). R's psych::alpha gives
# alpha = 0.592 and Feldt's 95% interval [0.195, 0.840] (pingouin tests/test_reliability.py).
CRONBACH = [
    (3, 2, 4, 1, 4, 5, 1, 4, 3, 2), (5, 4, 6, 3, 5, 1, 2, 5, 5, 5), (7, 3, 5, 5, 6, 4, 3, 3, 6, 5),
    (2, 4, 3, 3, 2, 2, 2, 6, 6, 3), (6, 5, 6, 5, 4, 4, 4, 6, 7, 5), (1, 2, 3, 4, 2, 5, 2, 3, 5, 2),
    (4, 3, 5, 3, 5, 2, 1, 2, 4, 3), (2, 4, 4, 3, 7, 2, 2, 4, 6, 5), (6, 5, 5, 5, 1, 6, 5, 2, 3, 2),
    (5, 4, 6, 4, 3, 5, 3, 1, 7, 2), (4, 3, 5, 2, 5, 3, 2, 3, 4, 1), (4, 2, 3, 2, 5, 3, 4, 2, 3, 4),
    (5, 5, 6, 2, 3, 3, 2, 4, 4, 5), (6, 5, 5, 4, 2, 2, 1, 4, 6, 5), (4, 3, 5, 5, 3, 1, 3, 2, 3, 4),
]  # fmt: skip


async def _cronbach_db(db: Path, reverse_item: str | None) -> None:
    """The dataset as post-task answers; ``reverse_item`` is stored as 8 − x and declared
    reverse, so that scoring must recode it to get the published alpha back."""
    items = [_scale(f"r.q{i}", "c", 1, 7, reverse=f"r.q{i}" == reverse_item) for i in range(1, 11)]
    bundle = _bundle({"r": {"id": "r", "title": "Ratings", "items": items}}, post_task=["r"])
    steps = []
    for subject, row in enumerate(CRONBACH):
        session = f"s{subject}"
        values = {
            f"r.q{i}": 8 - v if f"r.q{i}" == reverse_item else v for i, v in enumerate(row, start=1)
        }
        opened = fx.OpenSession(session, "task", "s1", 0, "random", "0")
        steps.append((f"p{subject:02d}", [opened, *_answers(session, "r", values)]))
    await _write(db, bundle, steps)


@pytest.mark.parametrize("reverse_item", [None, "r.q5"])
async def test_cronbach_alpha_from_the_database_matches_the_reference(
    tmp_path: Path, reverse_item: str | None
) -> None:
    await _cronbach_db(tmp_path / "study.sqlite", reverse_item)
    data = load_study_data(tmp_path / "study.sqlite")
    table = construct_reliability(data.responses).set_index("system_id")
    assert list(table.index) == ["s1", ALL_SYSTEMS]
    row = table.loc[ALL_SYSTEMS]
    assert (row["k_items"], row["n_cases"], row["n_incomplete"]) == (10, 15, 0)
    assert row["alpha"] == pytest.approx(0.5917188, abs=1e-6)
    assert (row["ci_low"], row["ci_high"]) == (0.195, 0.840)
    # The textbook formula, by hand: k/(k − 1) · (1 − Σ item variances / total variance).
    x = np.array(CRONBACH, dtype=float)
    by_hand = 10 / 9 * (1 - x.var(axis=0, ddof=1).sum() / x.sum(axis=1).var(ddof=1))
    assert row["alpha"] == pytest.approx(by_hand)
    # Item tables describe answers as given: the reversed item's mean is 8 − the original's.
    items = describe_items(data.responses).set_index("item_id")
    original = x[:, 4].mean()
    expected = 8 - original if reverse_item else original
    assert items.loc["r.q5", "mean"] == pytest.approx(expected)


async def test_alpha_explains_itself_when_it_cannot_be_computed(tmp_path: Path) -> None:
    items = [_scale("t.a", "pair", 1, 5), _scale("t.b", "pair", 1, 5), _scale("t.c", "solo", 1, 5)]
    bundle = _bundle({"t": {"id": "t", "title": "T", "items": items}}, post_study=["t"])
    steps = [
        (f"p{i}", _answers(None, "t", {"t.a": i % 5 + 1, "t.b": 3, "t.c": 2})) for i in range(3)
    ]
    await _write(tmp_path / "study.sqlite", bundle, steps)
    table = construct_reliability(load_study_data(tmp_path / "study.sqlite").responses)
    notes = dict(zip(table["construct"], table["note"], strict=True))
    assert notes == {
        "pair": "3 complete answer sets (at least 5 needed)",
        "solo": "one item only: alpha needs at least two",
    }
    assert table["alpha"].isna().all()


def _idial_bundle(systems: tuple[str, ...]) -> StudyBundle:
    source = files("questionnaires") / "library" / "idial.yaml"
    idial = yaml.safe_load(source.read_text(encoding="utf-8"))
    return _bundle({"idial": idial}, post_study=["idial"], systems=systems)


# Two participants of system "ch1" answer the ten IDIAL statements (0 = never … 4 = always).
IDIAL_ANSWERS = {
    "p1": [4, 3, 3, 1, 3, 3, 2, 3, 3, 4],
    "p2": [2, 2, 2, 4, 1, 2, 1, 0, 1, 1],
}


async def test_idial_summary_is_average_x_over_4(tmp_path: Path) -> None:
    """By hand, statement 4 recoded as 4 − answer (p1: 3, p2: 0):
    task completion (1, 2): (4 + 3 + 2 + 2) / 4 = 2.75;
    effectiveness (3, 4, 7, 10): (3 + 3 + 2 + 4 + 2 + 0 + 1 + 1) / 8 = 2.00;
    user satisfaction (5, 6, 8, 9): (3 + 3 + 3 + 3 + 1 + 2 + 0 + 1) / 8 = 2.00."""
    steps = []
    for participant, answers in IDIAL_ANSWERS.items():
        session = f"{participant}-task"
        values = {f"idial.s{i}": v for i, v in enumerate(answers, start=1)}
        opened = fx.OpenSession(session, "task", "ch1", 0, "random", "0")
        steps.append((participant, [opened, *_answers(None, "idial", values)]))
    await _write(tmp_path / "study.sqlite", _idial_bundle(("ch1",)), steps)
    responses = load_study_data(tmp_path / "study.sqlite").responses
    # Post-study answers belong to the one system each participant met.
    assert set(responses["system_id"]) == {"ch1"} and set(responses["moment"]) == {"post_study"}
    table = idial_summary(responses)
    assert list(table["aspect"]) == [
        "Task completion",
        "Effectiveness of the dialogue",
        "User satisfaction",
    ]
    assert list(table["summary"]) == ["2.75/4", "2.00/4", "2.00/4"]
    assert list(table["statements"]) == ["1, 2", "3, 4, 7, 10", "5, 6, 8, 9"]
    assert list(table["n_answers"]) == [4, 8, 8]
    assert list(table["n_participants"]) == [2, 2, 2]
    scores = construct_scores(responses).set_index(["participant_id", "construct"])["score"]
    assert scores[("p1", "effectiveness")] == pytest.approx((3 + 3 + 2 + 4) / 4)
    assert scores[("p2", "effectiveness")] == pytest.approx((2 + 0 + 1 + 1) / 4)


async def test_ratings_by_turn_use_scores(tmp_path: Path) -> None:
    items = [_scale("x.good", "q", 1, 5), _scale("x.bad", "q", 1, 5, reverse=True)]
    bundle = _bundle({"x": {"id": "x", "title": "X", "items": items}})
    records: list[fx.Record] = [fx.OpenSession("s", "task", "s1", 0, "random", "0")]
    for turn, (good, bad) in enumerate([(5, 1), (3, 3), (1, 4)], start=1):
        records += _answers(
            "s", "x", {"x.good": good, "x.bad": bad}, scope=f"s#turn{turn}", turn=turn
        )
    await _write(tmp_path / "study.sqlite", bundle, [("p", records)])
    responses = load_study_data(tmp_path / "study.sqlite").responses
    by_item = ratings_by_turn(responses).set_index(["item_id", "turn"])["mean"]
    assert by_item[("x.bad", 1)] == 5 and by_item[("x.bad", 3)] == 2  # 6 − answer
    by_construct = ratings_by_turn(responses, level="construct")
    assert list(by_construct["mean"]) == [5.0, 3.0, 1.5]


# Shrout & Fleiss (1979), "Intraclass correlations: uses in assessing rater reliability",
# Psychological Bulletin 86(2):420-428, Table 2: 4 judges rate 6 targets on a 1-10 scale.
# Table 4 gives ICC(2,1) = .29 and ICC(2,4) = .62 (the HRI CUES protocol reports both forms).
SHROUT_FLEISS = {
    "j1": [9, 6, 8, 7, 10, 6],
    "j2": [2, 1, 4, 1, 5, 2],
    "j3": [5, 3, 6, 2, 6, 4],
    "j4": [8, 2, 8, 6, 9, 7],
}


async def test_rater_agreement_matches_shrout_and_fleiss(tmp_path: Path) -> None:
    import pingouin as pg

    bundle = _bundle(
        {"judge": {"id": "judge", "title": "J", "items": [_scale("judge.score", None, 1, 10)]}}
    )
    steps = []
    for judge, ratings in SHROUT_FLEISS.items():
        session = f"{judge}-rating"
        records: list[fx.Record] = [fx.OpenSession(session, "task", "s1", 0, "random", "0")]
        for target, value in enumerate(ratings, start=1):
            scope = f"{session}#t{target}"
            records += _answers(
                session, "judge", {"judge.score": value}, scope=scope, stimulus_id=f"t{target}"
            )
        steps.append((judge, records))
    await _write(tmp_path / "study.sqlite", bundle, steps)
    responses = load_study_data(tmp_path / "study.sqlite").responses
    assert set(responses["moment"]) == {Moment.RATING}
    (row,) = rater_agreement(responses).to_dict("records")
    assert (row["n_raters"], row["n_stimuli"]) == (4, 6)
    assert round(row["icc2_1"], 2) == 0.29
    assert round(row["icc2_k"], 2) == 0.62
    # R psych::ICC on the same table (pingouin tests/test_reliability.py): 95% intervals
    # [0.02, 0.76] for ICC(2,1) and [0.07, 0.93] for ICC(2,k), to 2 dp.
    assert (round(row["icc2_1_ci_low"], 2), round(row["icc2_1_ci_high"], 2)) == (0.02, 0.76)
    assert (round(row["icc2_k_ci_low"], 2), round(row["icc2_k_ci_high"], 2)) == (0.07, 0.93)
    assert pg.options["round.column.CI95"] == 2  # the global option is restored
    assert -1 <= row["krippendorff_alpha"] <= 1 and row["note"] is None


async def test_rater_agreement_keeps_the_same_stimulus_id_under_two_systems_apart(
    tmp_path: Path,
) -> None:
    """Stimuli rated under two systems: six real stimuli, shown as t1-t3 under system s1 and again
    as t1-t3 under s2, were counted as three (with a wrong alpha and ICC)."""
    bundle = _bundle(
        {"judge": {"id": "judge", "title": "J", "items": [_scale("judge.score", None, 1, 10)]}},
        systems=("s1", "s2"),
    )
    steps = []
    for judge, ratings in SHROUT_FLEISS.items():
        records: list[fx.Record] = []
        for task, system in enumerate(("s1", "s2")):
            session = f"{judge}-{system}"
            records.append(fx.OpenSession(session, "task", system, task, "random", "0"))
            for index, value in enumerate(ratings[3 * task : 3 * task + 3], start=1):
                records += _answers(
                    session, "judge", {"judge.score": value},
                    scope=f"{session}#t{index}", stimulus_id=f"t{index}",
                )  # fmt: skip
        steps.append((judge, records))
    await _write(tmp_path / "study.sqlite", bundle, steps)
    (row,) = rater_agreement(load_study_data(tmp_path / "study.sqlite").responses).to_dict(
        "records"
    )
    assert (row["n_raters"], row["n_stimuli"]) == (4, 6)
    assert round(row["icc2_1"], 2) == 0.29 and round(row["icc2_k"], 2) == 0.62


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers,
# 12 units, missing values; interval alpha = 0.849 (nominal 0.743).
KRIPPENDORFF = {
    "a": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    "b": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    "c": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    "d": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
}


async def test_rater_agreement_with_missing_ratings_matches_krippendorff(tmp_path: Path) -> None:
    bundle = _bundle(
        {"judge": {"id": "judge", "title": "J", "items": [_scale("judge.score", None, 1, 5)]}}
    )
    steps = []
    for coder, ratings in KRIPPENDORFF.items():
        session = f"{coder}-rating"
        records: list[fx.Record] = [fx.OpenSession(session, "task", "s1", 0, "random", "0")]
        for unit, value in enumerate(ratings, start=1):
            if value is not None:
                scope = f"{session}#u{unit}"
                records += _answers(
                    session,
                    "judge",
                    {"judge.score": value},
                    scope=scope,
                    stimulus_id=f"u{unit:02d}",
                )
        steps.append((coder, records))
    await _write(tmp_path / "study.sqlite", bundle, steps)
    (row,) = rater_agreement(load_study_data(tmp_path / "study.sqlite").responses).to_dict(
        "records"
    )
    assert (row["n_raters"], row["n_stimuli"]) == (4, 12)
    assert row["krippendorff_alpha"] == pytest.approx(0.849, abs=5e-4)
    assert math.isnan(row["icc2_1"])  # ICC needs every rater on every stimulus


def test_each_constructs_answers_are_the_groupbys_parts(tmp_path: Path) -> None:
    """Cronbach's alpha takes one construct's answers at a time (not every scored answer
    copied and sorted): the same parts, in the same order, rows in the same order, as
    ``groupby(["questionnaire_id", "construct"])``, with answers outside any construct and
    without a score left out."""
    from analytics.data.synthetic import write_synthetic_study
    from analytics.statistics.questionnaires import _by_construct

    write_synthetic_study(tmp_path / "s.sqlite", sessions=40, responses_per_session=30, seed=2)
    responses = load_study_data(tmp_path / "s.sqlite").responses
    responses = responses.sample(frac=1.0, random_state=1)  # rows out of any order
    responses.loc[responses.index[::7], "score"] = np.nan
    kept = ["questionnaire_id", "construct", "participant_id", "item_id", "score"]
    scored = responses.loc[responses["construct"].notna() & responses["score"].notna(), kept]
    expected = [
        part for _, part in scored.groupby(["questionnaire_id", "construct"], observed=True)
    ]
    found = list(_by_construct(responses, kept))
    assert len(found) == len(expected) > 2
    for mine, theirs in zip(found, expected, strict=True):
        pd.testing.assert_frame_equal(mine, theirs)


def _shuffled_decimal_study(tmp_path: Path) -> pd.DataFrame:
    """A synthetic study's answers, rows out of any order, numbers with decimals (whose
    sums and midpoints round) and some missing."""
    from analytics.data.synthetic import write_synthetic_study

    write_synthetic_study(tmp_path / "s.sqlite", sessions=60, responses_per_session=30, seed=3)
    responses = load_study_data(tmp_path / "s.sqlite").responses
    responses = responses.sample(frac=1.0, random_state=2)
    rng = np.random.default_rng(4)
    numbers = responses["value"].notna().to_numpy()
    decimals = rng.choice([0.1, 0.7, 1.3, 2.05, 10 / 3], size=int(numbers.sum()))
    responses.loc[numbers, "value"] = decimals
    responses.loc[numbers, "score"] = decimals[::-1]
    responses.loc[responses.index[::9], ["value", "score"]] = np.nan
    return responses


def test_item_medians_and_quartiles_are_pandas_own(tmp_path: Path) -> None:
    """Item tables take medians and quartiles from each group's counted answers rather
    than sorting every answer: the same numbers, to the bit, as pandas' groupby ``median``
    and ``quantile`` on the answers themselves."""
    from analytics.statistics.questionnaires import answered_closed

    responses = _shuffled_decimal_study(tmp_path)
    keys = ["system_id", "questionnaire_id", "item_id"]
    table = describe_items(responses).set_index(keys)
    values = answered_closed(responses).groupby(keys, observed=True)["value"]
    quartiles = values.quantile(np.array([0.25, 0.75])).unstack()
    numeric = table["mean"].notna()
    assert numeric.sum() > 10
    for column, expected in [
        ("median", values.median()),
        ("q1", quartiles[0.25]),
        ("q3", quartiles[0.75]),
    ]:
        found = table.loc[numeric, column]
        assert np.array_equal(found.to_numpy(), expected[found.index].to_numpy())


def test_construct_scores_are_the_groupbys_in_order_first_seen(tmp_path: Path) -> None:
    """Construct scores number answer sets by runs of rows (an answer set's answers are
    stored together) and count a construct's items from a small table: the same scores,
    in the same order, as grouping every scored answer, with rows out of any order."""
    responses = _shuffled_decimal_study(tmp_path)
    keys = ["participant_id", "scope", "questionnaire_id", "construct"]
    scored = responses[responses["construct"].notna() & responses["score"].notna()]
    sets = scored.groupby(keys, observed=True, sort=False)
    expected = pd.concat(
        [
            sets["score"].agg(["mean", "size"]).set_axis(["score", "n_items"], axis=1),
            sets[["system_id", "session_id", "turn"]].first(),
        ],
        axis=1,
    ).reset_index()
    k = scored.groupby(["questionnaire_id", "construct"], observed=True)["item_id"].nunique()
    expected["k_items"] = [
        k[(q, c)] for q, c in zip(expected["questionnaire_id"], expected["construct"], strict=True)
    ]
    found = construct_scores(responses)
    columns = [*keys, "score", "n_items", "system_id", "session_id", "turn", "k_items"]
    pd.testing.assert_frame_equal(
        found[columns].astype(object), expected[columns].astype(object), check_exact=True
    )


@pytest.mark.parametrize("sort", [True, False])
def test_numbering_runs_of_keys_is_factorizing_them(sort: bool) -> None:
    """Answer sets are numbered one run of equal keys at a time: the same numbers as
    ``pd.factorize`` of every key, whether a set's rows are together, apart or alone."""
    from analytics.statistics.questionnaires import _factorize_runs

    rng = np.random.default_rng(5)
    together = np.repeat(rng.integers(0, 50, size=200), rng.integers(1, 6, size=200))
    for key in (together, rng.permutation(together), together[:1], together[:0]):
        codes, uniques = _factorize_runs(key, sort=sort)
        expected_codes, expected_uniques = pd.factorize(key, sort=sort)
        assert np.array_equal(codes, expected_codes)
        assert np.array_equal(uniques, expected_uniques)
