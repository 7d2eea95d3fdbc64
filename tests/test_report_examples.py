"""Example conversations in the report, as a reviewer reads them: a few whole transcripts
per system, the same ones on every run (chosen with the study's seed), each exchange's
ratings beside its turn, and the participants' and systems' words escaped in every format."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest

from analytics.data.selecting import load_study
from analytics.data.synthetic import write_synthetic_study
from analytics.report.examples import COLUMNS, PER_SYSTEM, example_blocks, example_conversations
from analytics.report.render_html import render_html
from analytics.report.render_md import render_markdown
from analytics.report.render_terminal import render_terminal
from analytics.report.render_tex import write_latex
from bot.cli import analytics_main as main
from bot.core.researcher_files import private_folder, write_private

pytestmark = pytest.mark.slow  # whole reports: make test, not make check

HOSTILE = "<script>alert(1)</script> *bold* [red]x[/red] \\input{f} \x1b[31m 50% & $ | `"


@pytest.fixture(scope="module")
def study_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("examples") / "study.sqlite"
    write_synthetic_study(db, sessions=60, responses_per_session=20, seed=5, systems=2)
    return db


def test_a_few_whole_conversations_per_system_with_their_ratings(study_db: Path, capsys) -> None:
    data = load_study(study_db)
    chosen = example_conversations(data, ["system-a", "system-b"])
    again = example_conversations(load_study(study_db), ["system-a", "system-b"])
    pd.testing.assert_frame_equal(chosen, again)  # the same ones on every run
    sessions = chosen.groupby("system_id")["session_id"].nunique()
    assert sessions.to_dict() == {"system-a": PER_SYSTEM, "system-b": PER_SYSTEM}
    for session, turns in chosen.groupby("session_id"):
        whole = data.exchanges[data.exchanges["session_id"] == session]
        assert list(turns["turn"]) == sorted(whole["turn"].astype(int))  # every exchange
        state = data.sessions.set_index("session_id").loc[session, "state"]
        assert state == "ended"
    rated = data.responses[data.responses["turn"].notna()]
    first = chosen.iloc[0]
    mine = rated[(rated["session_id"] == first["session_id"]) & (rated["turn"] == first["turn"])]
    assert first["ratings"] == {
        str(r.item_id): str(int(float(r.value))) for r in mine.itertuples()
    }  # fmt: skip
    assert main(["report", "--db", str(study_db), "--format", "json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert [r["session_id"] for r in found["examples"]] == list(chosen["session_id"])
    assert found["examples"][0]["ratings"] == first["ratings"]
    keys = list(found)
    assert keys.index("comments") < keys.index("examples") < keys.index("quality")
    assert main(["report", "--db", str(study_db), "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert "## Example conversations" in md and "| Turn | Participant | System | Ratings" in md
    assert "q1 = synthetic-exchange.q1 “" in md


def test_outside_words_are_escaped_in_every_format(tmp_path: Path) -> None:
    row = dict.fromkeys(COLUMNS, None) | {
        "system_id": "shop", "session_id": "s-1", "participant_id": "p1", "scenario_id": "gift",
        "end_reason": "success", "turn": 1, "user_text": HOSTILE, "system_text": HOSTILE,
        "source": "edited", "ratings": {"judge.q1": "4"},
    }  # fmt: skip
    examples = pd.DataFrame([row], columns=list(COLUMNS))
    codebook = pd.DataFrame({"item_id": ["judge.q1"], "text": ["<b>Was it *clear*?</b>"]})
    blocks = example_blocks(examples, codebook)
    md = render_markdown(blocks)
    assert "<script>" not in md and r"\<script\>" in md and r"\*bold\*" in md
    assert "[edited by a wizard]" not in md and r"\[edited by a wizard\]" in md
    page = render_html_blocks(blocks)
    assert "<script>" not in page and "&lt;script&gt;" in page and "&lt;b&gt;Was it" in page
    terminal = io.StringIO()
    render_terminal(blocks, file=terminal, width=200)
    shown = terminal.getvalue()
    assert "\x1b" not in shown and "\\x1b[31m" in shown and "[red]x[/red]" in shown
    main_tex = tmp_path / "report.tex"
    write_latex(blocks, main_tex, lambda _: [], write_private, private_folder)
    table = next((tmp_path / "report-tables").iterdir()).read_text(encoding="utf-8")
    assert r"\textbackslash{}input\{f\}" in table and r"50\% \& \$" in table
    assert "\\input{f}" not in table


def render_html_blocks(blocks: list) -> str:
    """The HTML renderer on blocks alone: with no figure among them it never reads the
    report's numbers."""
    return render_html(None, blocks)  # type: ignore[arg-type]
