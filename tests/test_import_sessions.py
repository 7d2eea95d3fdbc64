"""Sessions done outside Telegram come in with ``ozlab import sessions``, checked row by row
as the other imports check theirs, and the known answers go through the researcher's path,
import then ``ozlab report --format json``:

- task success of three tasks per participant: geepack's GEE (tests/r/success_gee.R; the
  fixture values of tests/test_models_success.py, there written through the store), and the
  textbook Ohio wheeze data as sessions (tests/r/gee_ohio_import.R);
- a crossed mixed model (participant and scenario random intercepts) of IDIAL's
  task_completion: lme4 (tests/r/mixed_crossed_import.R), the answers imported after the
  sessions with ``ozlab import responses`` and their session ids.
"""

from __future__ import annotations

import asyncio
import csv
import json
import math
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from analytics.statistics.ordinal import METHOD as ORDINAL_METHOD
from bot.cli import main
from tests.test_models_success import (
    ALPHA,
    GEEPACK,
    LOG_OR,
    LOG_OR_SE,
    PATTERNS,
    TOLERANCE,
    WALD,
    WALD_P,
)
from tests.test_models_success import _write as write_through_the_bot

FIXTURES = Path(__file__).parent / "fixtures"
SYSTEMS = {"alpha": "shop-v0", "beta": "shop-v1"}  # the same reference: the first in order
SCENARIOS = ("idial-budget", "idial-compare", "idial-wishlist")
# (estimate, SE) from lme4; (Satterthwaite's df, p, t interval) from lmerTest
# (tests/r/mixed_satterthwaite.R): four scenarios leave the intercept 7.5 degrees of freedom
LME4 = {
    "intercept (shop-v0)": (
        1.79109449291398, 0.278994157564044, 7.51357397356486, 0.000267731858125380,
        1.140410272115542, 2.44177871371243,
    ),
    "shop-v1 − shop-v0": (
        1.05669990306089, 0.257610391498197, 22.62436389723110, 0.000448764821601588,
        0.523302188201784, 1.59009761791999,
    ),
}  # fmt: skip
VAR_PARTICIPANT, VAR_SCENARIO, VAR_RESIDUAL = (
    0.337978387906671,
    0.179686537553821,
    0.161488388520642,
)
REML = 130.689117586048


def _sessions_file(path: Path, patterns: dict[str, list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(["participant_id", "system", "scenario", "success"])
        for system, people in patterns.items():
            for i, tasks in enumerate(people):
                for t, bit in enumerate(tasks):
                    success = "true" if bit == "1" else "false"
                    out.writerow([f"{system[0]}{i:02d}", SYSTEMS[system], SCENARIOS[t], success])
    return path


def _json_report(db: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    capsys.readouterr()
    assert main(["report", "--db", str(db), "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_geepacks_known_answer_passes_through_import_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, file = tmp_path / "tasks.sqlite", _sessions_file(tmp_path / "tasks.csv", PATTERNS)
    assert main(["import", "sessions", str(file), "--db", str(db), "--study", "idial"]) == 0
    assert "54 sessions of 18 participants imported" in capsys.readouterr().out
    report = _json_report(db, capsys)
    rows = {r["system_id"]: r for r in report["completion"]["by_system"]}
    for system, (rate, low, high, _) in GEEPACK.items():
        row = rows[SYSTEMS[system]]
        assert row["success_rate"] == pytest.approx(rate, abs=TOLERANCE)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), abs=TOLERANCE)
        assert row["ci_method"].startswith("GEE over sessions clustered by participant")
    (test,) = report["models"]["success"]["test"]
    assert test["n_sessions"] == 54 and test["n_participants"] == 18 and test["df"] == 1
    assert test["chi2"] == pytest.approx(WALD, abs=1e-8)
    assert test["p"] == pytest.approx(WALD_P, abs=TOLERANCE)
    assert test["working_correlation"] == pytest.approx(ALPHA, abs=TOLERANCE)
    (odds,) = report["models"]["success"]["odds_ratios"]
    assert (odds["system_id"], odds["reference"]) == ("shop-v1", "shop-v0")
    assert odds["odds_ratio"] == pytest.approx(2.718281828459045**LOG_OR, rel=TOLERANCE)
    z = 1.959963984540054
    ends = [2.718281828459045 ** (LOG_OR + s * z * LOG_OR_SE) for s in (-1, 1)]
    assert [odds["ci_low"], odds["ci_high"]] == pytest.approx(ends, rel=1e-8)
    # the headline table of the report shows the same test and odds ratio with its interval
    out = tmp_path / "report.md"
    assert main(["report", "--db", str(db), "--out", str(out)]) == 0
    text = " ".join(out.read_text(encoding="utf-8").split()).replace("\\[", "[")
    shown = [f"{v:.3g}" for v in (2.718281828459045**LOG_OR, *ends)]
    assert (
        f"GEE (sessions clustered by participant) | Wald χ²(1) = {WALD:.1f}, p = .002, odds "
        f"ratio of success, shop-v1 vs shop-v0 = {shown[0]}, 95% CI [{shown[1]}, {shown[2]}"
    ) in text.replace("\\]", "]")


def test_lme4s_crossed_model_passes_through_import_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "crossed.sqlite"
    sessions, answers = (FIXTURES / f"crossed_import_{k}.csv" for k in ("sessions", "answers"))
    assert main(["import", "sessions", str(sessions), "--db", str(db), "--study", "idial"]) == 0
    assert main(["import", "responses", str(answers), "--db", str(db)]) == 0
    models = _json_report(db, capsys)["models"]
    fits = {(f["measure_kind"], f["measure"]): f for f in models["mixed"]["fits"]}
    fit = fits[("construct", "task_completion")]
    assert (fit["n_scores"], fit["n_participants"], fit["n_scenarios"]) == (72, 24, 4)
    assert "one per scenario (crossed)" in fit["formula"]
    # lme4 stops where the likelihood is flat: variances within 1e-4 (tests/test_models_mixed.py)
    got = [fit[k] for k in ("var_participant", "var_scenario", "var_residual")]
    assert got == pytest.approx([VAR_PARTICIPANT, VAR_SCENARIO, VAR_RESIDUAL], abs=1e-4)
    assert fit["reml_criterion"] <= REML + 1e-7
    terms = {
        t["term"]: t
        for t in models["mixed"]["terms"]
        if (t["measure_kind"], t["measure"]) == ("construct", "task_completion")
    }
    assert set(terms) == set(LME4)
    for name, (estimate, se, df, p, low, high) in LME4.items():
        found = terms[name]
        assert found["estimate"] == pytest.approx(estimate, abs=1e-5), name
        assert found["se"] == pytest.approx(se, abs=1e-5), name
        assert found["df"] == pytest.approx(df, rel=1e-4), name
        assert found["p"] == pytest.approx(p, rel=1e-3), name  # the variances to 1e-4
        assert (found["ci_low"], found["ci_high"]) == pytest.approx((low, high), abs=1e-4)


# geepack, tests/r/gee_ohio_import.R: per group (rate, low, high); resp ~ smoke
OHIO_RATES = {
    "shop-v0": (0.139285714285714, 0.115405933719133, 0.167172894827976),
    "shop-v1": (0.175133689839572, 0.139063628387076, 0.218188484302565),
}
OHIO_LOG_OR, OHIO_SE, OHIO_WALD, OHIO_P = (
    0.271563586656776, 0.177603005128401, 2.33798893774053, 0.126252451607715,
)  # fmt: skip
OHIO_AGES = {-2: "idial-budget", -1: "idial-compare", 0: "idial-wishlist", 1: "idial-info"}


def test_the_textbook_wheeze_data_pass_through_import_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ohio children's wheeze (Fitzmaurice, Laird & Ware's data set, shipped with geepack)
    as sessions: 537 children, four ages each as four tasks, wheeze as success, the
    mother's smoking as the system. statsmodels and geepack estimate the working
    correlation differently (tests/test_models_success.py): estimates agree to 1e-5."""
    ohio = pd.read_csv(FIXTURES / "gee_ohio.csv")
    file = tmp_path / "ohio.csv"
    pd.DataFrame(
        {
            "participant": [f"C{i:03d}" for i in ohio["id"]],
            "system": ["shop-v1" if s else "shop-v0" for s in ohio["smoke"]],
            "scenario": [OHIO_AGES[a] for a in ohio["age"]],
            "success": ["true" if r else "false" for r in ohio["resp"]],
        }
    ).to_csv(file, index=False)
    db = tmp_path / "ohio.sqlite"
    assert main(["import", "sessions", str(file), "--db", str(db), "--study", "idial"]) == 0
    assert "2,148 sessions of 537 participants imported" in capsys.readouterr().out
    report = _json_report(db, capsys)
    rows = {r["system_id"]: r for r in report["completion"]["by_system"]}
    for system, (rate, low, high) in OHIO_RATES.items():
        assert rows[system]["success_rate"] == pytest.approx(rate, abs=1e-9)
        got = (rows[system]["ci_low"], rows[system]["ci_high"])
        assert got == pytest.approx((low, high), abs=1e-5)
    (test,) = report["models"]["success"]["test"]
    assert (test["n_sessions"], test["n_participants"]) == (2148, 537)
    assert test["chi2"] == pytest.approx(OHIO_WALD, abs=1e-4)
    assert test["p"] == pytest.approx(OHIO_P, abs=1e-5)
    (odds,) = report["models"]["success"]["odds_ratios"]
    z = 1.959963984540054
    ends = [math.exp(OHIO_LOG_OR + s * z * OHIO_SE) for s in (-1, 1)]
    assert odds["odds_ratio"] == pytest.approx(math.exp(OHIO_LOG_OR), abs=1e-5)
    assert [odds["ci_low"], odds["ci_high"]] == pytest.approx(ends, abs=1e-5)


def _stored_sessions(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM sessions").fetchone()[0])


def test_a_file_with_problems_is_imported_not_at_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every problem with its line and field, then one line and status 3; nothing stored."""
    db, file = tmp_path / "study.sqlite", tmp_path / "sessions.csv"
    file.write_text(
        "participant,system,scenario,success,completed,session\n"
        "P01,shop-v0,idial-budget,true,,s1\n"
        "Alice Smith,shop-v0,idial-budget,true,,s2\n"
        "P02,shop-v9,idial-nowhere,maybe,,s3\n"
        "P03,shop-v1,idial-info,true,false,s4\n"
        "P04,shop-v1,idial-info,false,,s1\n",
        encoding="utf-8",
    )
    assert main(["import", "sessions", str(file), "--db", str(db), "--study", "idial"]) == 3
    err = capsys.readouterr().err
    assert f"{file}:3: participant: 'Alice Smith' does not look like a pseudonym" in err
    assert f"{file}:4: system: no system 'shop-v9' in this study (shop-v0, shop-v1)" in err
    assert f"{file}:4: scenario: no scenario 'idial-nowhere'" in err
    assert f"{file}:4: success: 'maybe' is neither true nor false" in err
    assert f"{file}:5: completed: false, but success is true" in err
    assert f"{file}:6: session: 's1' is already on line 2" in err
    assert err.rstrip().endswith("6 problems: nothing was imported.")
    assert "Traceback" not in err
    file.write_text("participant,system,scenario,success,mood\n", encoding="utf-8")
    assert main(["import", "sessions", str(file), "--db", str(db), "--study", "idial"]) == 3
    assert "unknown column(s): mood" in capsys.readouterr().err
    assert not db.exists() or _stored_sessions(db) == 0


def test_participants_already_in_the_database_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A participant who came through Telegram, or in an earlier import, has the bot's
    sessions, or has them already: a file naming them is refused whole."""
    db = tmp_path / "tasks.sqlite"
    asyncio.run(write_through_the_bot(db, {"alpha": ["1"] * 5, "beta": ["0"] * 5}))
    before = _stored_sessions(db)
    file = tmp_path / "more.csv"
    file.write_text("participant,system,scenario,success\na00,alpha,order,true\n", encoding="utf-8")
    assert main(["import", "sessions", str(file), "--db", str(db)]) == 3
    err = capsys.readouterr().err
    assert "participant: 'a00' is already in this database" in err
    assert _stored_sessions(db) == before
    file.write_text("participant,system,scenario,success\nN01,alpha,order,true\n", encoding="utf-8")
    assert main(["import", "sessions", str(file), "--db", str(db), "--dry-run"]) == 0
    assert "1 session of 1 participant would be imported (dry run)" in capsys.readouterr().out
    assert _stored_sessions(db) == before
    assert main(["import", "sessions", str(file), "--db", str(db)]) == 0
    assert _stored_sessions(db) == before + 1
    assert main(["import", "sessions", str(file), "--db", str(db)]) == 3
    assert "'N01' is already in this database" in capsys.readouterr().err


def test_an_ordinal_item_given_several_times_gets_the_cumulative_link_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """HMD's single 1-5 items after each of two tasks: ordered categories, so the report
    fits the cumulative link mixed model (tests/test_models_ordinal.py checks its numbers
    against R's clmm), not the linear one."""
    db, sessions, answers = (tmp_path / n for n in ("hmd.sqlite", "s.csv", "a.csv"))
    people = [(f"P{i:02d}", "shop-v1" if i % 2 else "shop-v0") for i in range(12)]
    with sessions.open("w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(["participant", "system", "scenario", "success", "task", "started_at"])
        for n, (person, system) in enumerate(people):
            for task in range(2):
                at = 1_760_000_000 + 3600 * n + 600 * task
                out.writerow([person, system, "hmd-gift", "true", task, at])
    with answers.open("w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(["participant_id", "questionnaire_id", "item_id", "value", "session_id",
                      "answered_at"])  # fmt: skip
        for n, (person, system) in enumerate(people):
            for task in range(2):
                value = 1 + (n + task + (system == "shop-v1")) % 5
                at = 1_760_000_300 + 3600 * n + 600 * task
                out.writerow([person, "hmd", "hmd.usefulness", value, f"{person}-{task}", at])
    assert main(["import", "sessions", str(sessions), "--db", str(db), "--study", "hmd"]) == 0
    assert main(["import", "responses", str(answers), "--db", str(db)]) == 0
    models = _json_report(db, capsys)["models"]
    (fit,) = [f for f in models["mixed"]["fits"] if f["measure"] == "hmd.usefulness"]
    assert fit["n_scores"] == 24 and fit["note"] is None
    assert fit["method"] == ORDINAL_METHOD and fit["statistic"] == "z"
    assert len(fit["thresholds"]) == 4  # five answers seen
    out_md = tmp_path / "report.md"
    assert main(["report", "--db", str(db), "--out", str(out_md)]) == 0
    text = " ".join(out_md.read_text(encoding="utf-8").split())
    assert "Cumulative link mixed model (proportional odds" in text
    assert "logit P(answer ≤ j) = threshold j − (system), with a random intercept" in text
