"""The study's progression as declared phases: the diagram drawn from the declarations, no
phase importing another, and the typed button data."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from bot.core.vocabulary import Moment, Stage
from bot.engine import callbacks, diagram
from bot.engine.callbacks import (
    CallbackDataTooLong,
    Channel,
    ConsentTap,
    FinishTap,
    SurveyTap,
    SystemButtonTap,
    TapAction,
    WithdrawTap,
)
from bot.engine.common import Phase
from bot.engine.flow import _QUESTIONNAIRES, _STAGES

ENGINE = Path(diagram.__file__).parent


def test_flow_diagram_is_the_one_the_declarations_draw() -> None:
    """flow.mmd is generated: regenerate it with `python -m bot.engine.diagram`."""
    assert (ENGINE / "flow.mmd").read_text() == diagram.mermaid()


def test_every_phase_is_drawn_and_every_state_is_a_phase_or_a_named_sub_state() -> None:
    states = {t.source for t in diagram.transitions()} | {t.target for t in diagram.transitions()}
    assert {p.value for p in Phase} <= states
    assert states - {p.value for p in Phase} == {"[*]", "declined", "held", "waiting", "withdrawn"}


def test_every_stage_and_questionnaire_moment_has_its_phase() -> None:
    assert set(_STAGES) == set(Stage) - {Stage.QUESTIONNAIRE}
    assert set(_QUESTIONNAIRES) == set(Moment) - {Moment.EXCHANGE}  # beside the chat


def test_no_phase_imports_another() -> None:
    for path in (ENGINE / "phases").glob("*.py"):
        tree = ast.parse(path.read_text())
        imported = {
            node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
        } | {
            f"{node.module}.{alias.name}"
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom)
            for alias in node.names
        }
        assert not [m for m in imported if m.startswith("bot.engine.phases")], path.name


@pytest.mark.parametrize(
    ("tap", "data"),
    [
        (ConsentTap(accept=True), "c:y"),
        (ConsentTap(accept=False), "c:n"),
        (FinishTap(), "done"),
        (WithdrawTap(confirm=True), "w:y"),
        (WithdrawTap(confirm=False), "w:n"),
        (SystemButtonTap(3, 1), "sb:3:1"),
        (SurveyTap(Channel.FRONT, TapAction.ANSWER, 12, 4), "a:12:4"),
        (SurveyTap(Channel.EXCHANGE, TapAction.TOGGLE, 7, 0), "xm:7:0"),
        (SurveyTap(Channel.FRONT, TapAction.HELP, 9), "h:9"),
        (SurveyTap(Channel.EXCHANGE, TapAction.DONE, 2), "xd:2"),
    ],
)
def test_button_data_keeps_its_wire_form_and_round_trips(tap: callbacks.Tap, data: str) -> None:
    """The forms ozlab has always sent: buttons already in chats keep working."""
    assert callbacks.encode(tap) == data
    assert callbacks.decode(data) == tap


@pytest.mark.parametrize(
    "data", ["", "a", "a:", "a:1", "a:x:1", "q:1:2", "a:-1:2", "a:²:1", "sb:1", "c:maybe", "xa:1"]
)
def test_data_ozlab_never_wrote_decodes_to_nothing(data: str) -> None:
    assert callbacks.decode(data) is None


def test_data_over_telegrams_64_bytes_is_refused() -> None:
    with pytest.raises(CallbackDataTooLong):
        callbacks.encode(SurveyTap(Channel.FRONT, TapAction.ANSWER, 10**40, 10**20))
