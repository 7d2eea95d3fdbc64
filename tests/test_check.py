"""``ozlab check``: a summary of a sound study, every problem of a broken one."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli import main
from scenarios.starter import write_starter
from tests.conftest import VARIANTS

BROKEN = """\
id: broken
title: Broken
texts:
  welcome: Hello
  consent: Do you agree?
systems:
  - type: demo
    id: a
    variant: v3
scenarios: [hmd-gift, missing]
"""


def check(ref: str) -> int:
    """``ozlab check REF`` as a researcher runs it: its exit status."""
    return main(["check", ref])


def test_shipped_study_is_ok(capsys: pytest.CaptureFixture[str]) -> None:
    assert check("hmd") == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out.splitlines() == [
        "OK: study 'hmd' — 2 systems (shop-v1, shop-v0), 1 scenario (hmd-gift), "
        "2 questionnaires (hmd: 5 items, 4 scale, 1 text; acute-eval: 5 items, 4 choice, 1 text),"
        " balanced design",
        "  design: balanced (seed 20241); each participant: 1 scenario; systems between subjects",
        "  scenario hmd-gift: dialogue, at most 10 exchanges; after the task: hmd",
        "  annotation job hmd-acute: each pair of conversations (acute-eval), 1 annotator,"
        " each seen once, in order, balanced pairs, 20 per pair of systems,"
        " 2 onboarding pairs first (pass mark 75%)",
    ]


def test_every_problem_on_its_own_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study = tmp_path / "broken.yaml"
    study.write_text(BROKEN, encoding="utf-8")
    assert check(str(study)) == 10
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        f"{study}:3: texts.declined: Field required",
        f"{study}:9: systems[0].variant: {VARIANTS}",
        f"{study}:10: scenarios[1]: no scenario 'missing': neither "
        f"{tmp_path / 'scenarios' / 'missing.yaml'} nor the shipped "
        "scenarios/library/scenarios/missing.yaml exists",
        "3 problems found.",
    ]


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert check(str(tmp_path / "absent.yaml")) == 10
    _, err = capsys.readouterr()
    assert err.splitlines() == [f"{tmp_path / 'absent.yaml'}: file not found", "1 problem found."]


def test_unknown_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert check("absent") == 10
    err = capsys.readouterr().err
    assert "no shipped study of that name (shipped: " in err
    assert "hmd" in err


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_summary_tells_the_new_parts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_starter(tmp_path / "pilot")
    study = tmp_path / "pilot" / "study.yaml"
    text = study.read_text(encoding="utf-8")
    text = text.replace("scenarios: [my-task]", "scenarios: [my-task, sentences, hmd-gift]")
    text = text.replace("post_study: []", "post_study: [closing]")
    text = text.replace(
        "  # tasks_per_participant: 3\n  # order: random",
        "  tasks_per_participant: 2\n  order: random",
    )
    study.write_text(text, encoding="utf-8")
    write(
        tmp_path,
        "pilot/scenarios/sentences.yaml",
        "id: sentences\nkind: rating\ntitle: T\nbrief: Rate.\nstimuli: rows.jsonl\n"
        "rate_with: [sentence]\n",
    )
    write(tmp_path, "pilot/scenarios/rows.jsonl", '{"text": "a"}\n{"text": "b"}\n{"text": "c"}\n')
    item = "items:\n  - {type: thumbs, id: ID, text: 'Good?'}\n"
    write(
        tmp_path,
        "pilot/questionnaires/sentence.yaml",
        "id: sentence\ntitle: S\n" + item.replace("ID", "s.good"),
    )
    write(
        tmp_path,
        "pilot/questionnaires/closing.yaml",
        "id: closing\ntitle: C\n" + item.replace("ID", "c.good"),
    )
    assert check(str(study)) == 0
    out, err = capsys.readouterr()
    assert err == ""
    *lines, warning = out.splitlines()
    # Two of three scenarios between subjects cannot stay balanced (tests/test_check_design).
    assert warning.startswith(f"{study}:{line_of(text.splitlines(), 'tasks_per_participant: 2')}:")
    assert "warning: design.tasks_per_participant: a balanced design cannot" in warning
    assert lines[0].startswith("OK: study 'pilot' — 2 systems (shop-v1, shop-v0), 3 scenarios")
    assert lines[1:-1] == [
        "  design: balanced (seed 1); each participant: 2 of 3 scenarios in random order; "
        "systems between subjects",
        "  screening: my-screening (eligible if my-screening.adult = 1 and "
        "my-screening.english in ('native', 'fluent'))",
        "  scenario my-task: dialogue, at most 10 exchanges, 7m limit; after each reply: "
        "my-reply-rating; tools for language models: add_to_wishlist (ends the task); "
        "after the task: my-questionnaire; translated: it",
        "  scenario sentences: rating task, 3 rows from rows.jsonl; each rated with sentence",
        "  scenario hmd-gift: dialogue, at most 10 exchanges; after the task: hmd",
        "  after the study: closing",
        "  languages: en, it",
    ]
    # The starter translates only some words: the check lists the rest (tests/test_languages).
    assert lines[-1].startswith("  missing in it: scenario my-task: opening_line, closing_line; ")


def test_broken_stimuli_fail_the_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_starter(tmp_path / "pilot")
    study = tmp_path / "pilot" / "study.yaml"
    study.write_text(
        study.read_text(encoding="utf-8").replace("[my-task]", "[sentences]"), encoding="utf-8"
    )
    write(
        tmp_path,
        "pilot/scenarios/sentences.yaml",
        "id: sentences\nkind: rating\ntitle: T\nbrief: Rate.\nstimuli: rows.csv\n"
        "stimulus_template: '{mr} / {text}'\nrate_with: [my-questionnaire]\n",
    )
    rows = write(tmp_path, "pilot/scenarios/rows.csv", "id,text\na,b\n")
    assert check(str(study)) == 10
    _, err = capsys.readouterr()
    assert err.splitlines() == [
        f"{rows}:1: no 'mr' for {{mr}} of the scenario's stimulus_template (columns: text)",
        "1 problem found.",
    ]


# --- building the systems, as ozlab run does at start-up --------------------------------------

RESTOBOT = """\
from bot.core.conversation import SystemReply


class RestoBot:
    def __init__(self, temperature: float = 0.5) -> None:
        self.temperature = temperature

    async def respond(self, conversation):
        return SystemReply(texts=("A table for two?",))

    async def close(self) -> None:
        pass
"""


@pytest.fixture
def pilot(tmp_path: Path) -> Iterator[Path]:
    """A starter study whose folder holds its own adapter modules. ``ozlab check`` puts that
    folder on sys.path and imports them, as in a process of its own; afterwards this test
    process forgets both, so that no other test sees them."""
    path, modules = list(sys.path), set(sys.modules)
    write_starter(tmp_path / "pilot")
    yield tmp_path / "pilot"
    sys.path[:] = path
    for name in set(sys.modules) - modules:
        if str(tmp_path) in str(getattr(sys.modules[name], "__file__", None) or ""):
            del sys.modules[name]


def with_systems(study: Path, systems: str) -> list[str]:
    """The study with ``systems`` instead of the demo shop v0; its lines, to find numbers."""
    text = study.read_text(encoding="utf-8")
    demo = "  - type: demo\n    id: shop-v0\n    variant: v0\n"
    assert demo in text
    study.write_text(text.replace(demo, systems), encoding="utf-8")
    return study.read_text(encoding="utf-8").splitlines()


def line_of(lines: list[str], text: str) -> int:
    [number] = [n for n, line in enumerate(lines, start=1) if line.strip() == text]
    return number


def test_a_misspelled_class_fails_the_check_at_its_line(
    pilot: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(pilot, "ozc_resto_a.py", RESTOBOT)
    study = pilot / "study.yaml"
    lines = with_systems(
        study, "  - type: python\n    id: resto\n    entry: ozc_resto_a:RestoBott\n"
    )
    assert check(str(study)) == 10
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        f"{study}:{line_of(lines, 'entry: ozc_resto_a:RestoBott')}: systems[1].entry: the module"
        " 'ozc_resto_a' has no 'RestoBott' ('ozc_resto_a:RestoBott')",
        "1 problem found.",
    ]


def test_a_module_that_does_not_import_fails_the_check(
    pilot: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(pilot, "ozc_resto_b.py", "import ozc_not_installed_anywhere\n" + RESTOBOT)
    study = pilot / "study.yaml"
    lines = with_systems(
        study, "  - type: python\n    id: resto\n    entry: ozc_resto_b:RestoBot\n"
    )
    assert check(str(study)) == 10
    first, count = capsys.readouterr().err.splitlines()
    assert first == (
        f"{study}:{line_of(lines, 'entry: ozc_resto_b:RestoBot')}: systems[1].entry: importing"
        " 'ozc_resto_b:RestoBot' failed: No module named 'ozc_not_installed_anywhere'"
    )
    assert count == "1 problem found."


def test_options_the_class_rejects_fail_the_check_at_the_options(
    pilot: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(pilot, "ozc_resto_c.py", RESTOBOT)
    study = pilot / "study.yaml"
    lines = with_systems(
        study,
        "  - type: python\n    id: resto\n    entry: ozc_resto_c:RestoBot\n"
        "    options: {temperture: 0.2}\n",
    )
    assert check(str(study)) == 10
    first, _ = capsys.readouterr().err.splitlines()
    assert first.startswith(
        f"{study}:{line_of(lines, 'options: {temperture: 0.2}')}: systems[1].options: building"
        " 'ozc_resto_c:RestoBot' with options ['temperture'] failed: TypeError: "
    )
    assert "temperture" in first.split("TypeError: ")[1]


def test_every_system_that_cannot_be_built_is_told(
    pilot: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What only building an adapter finds, for each kind, in one run."""
    monkeypatch.delenv("OZC_LLM_KEY", raising=False)
    study = pilot / "study.yaml"
    lines = with_systems(
        study,
        "  - type: http\n    id: svc\n    url: http://127.0.0.1:9/chat\n"
        "    request: {input: message, input.text: message}\n"
        "  - type: openai\n    id: llm\n    url: http://127.0.0.1:9\n    model: m\n"
        "    api_key_env: OZC_LLM_KEY\n"
        "  - type: python\n    id: mine\n    entry: ozc_nowhere:Thing\n",
    )
    assert check(str(study)) == 10
    assert capsys.readouterr().err.splitlines() == [
        f"{study}:{line_of(lines, 'request: {input: message, input.text: message}')}: "
        "systems[1].request: the request paths 'input' and 'input.text' overlap: one would"
        " overwrite the other",
        f"{study}:{line_of(lines, 'api_key_env: OZC_LLM_KEY')}: systems[2].api_key_env: the"
        " environment variable OZC_LLM_KEY (api_key_env) is not set; set it to the system's"
        " API key before starting the bot",
        f"{study}:{line_of(lines, 'entry: ozc_nowhere:Thing')}: systems[3].entry: cannot import"
        " 'ozc_nowhere:Thing': there is no module 'ozc_nowhere' (is it installed, or on"
        " PYTHONPATH?)",
        "3 problems found.",
    ]


def test_a_correct_custom_adapter_beside_the_study_is_ok(
    pilot: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(pilot, "ozc_resto_d.py", RESTOBOT)
    study = pilot / "study.yaml"
    with_systems(
        study,
        "  - type: python\n    id: resto\n    entry: ozc_resto_d:RestoBot\n"
        "    options: {temperature: 0.2}\n",
    )
    assert check(str(study)) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out.startswith("OK: study 'pilot' — 2 systems (shop-v1, resto)")
