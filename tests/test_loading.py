"""Loading studies: the shipped HMD study, and broken files told with file, line and field."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import pytest

from questionnaires.models import ScaleItem, TextItem
from scenarios.loading import (
    Problem,
    StudyError,
    load_questionnaire,
    load_scenario,
    load_study,
    shipped_studies,
)
from scenarios.models import Design
from scenarios.systems import DemoSystem

STUDY = """\
# a small study that loads
id: mine
title: My study
texts:
  welcome: Hello
  consent: Do you agree?
  declined: Goodbye
systems:
  - type: demo
    id: shop-v1
  - type: demo
    id: shop-v0
    variant: v0
scenarios: [hmd-gift]
timing:
  reminder_after: 10m
  abandon_after: 1h
"""

SCENARIO = """\
id: gift
title: A gift
brief: Find a gift.
max_exchanges: 5
post_task: [rating]
"""

QUESTIONNAIRE = """\
id: rating
title: Rating
items:
  - type: scale
    id: rating.overall
    text: How was it?
    labels: {1: bad, 2: poor, 3: fair, 4: good, 5: great}
  - type: text
    id: rating.comment
    text: Anything else?
"""


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def line_of(text: str, needle: str, occurrence: int = 1) -> int:
    """The 1-based line of the n-th line containing ``needle``, so tests do not count by hand."""
    hits = [number for number, line in enumerate(text.splitlines(), 1) if needle in line]
    return hits[occurrence - 1]


def problems_of(ref: Path | str) -> list[Problem]:
    with pytest.raises(StudyError) as caught:
        load_study(ref)
    return caught.value.problems


def only_problem(ref: Path | str) -> Problem:
    problems = problems_of(ref)
    assert len(problems) == 1, "\n".join(map(str, problems))
    return problems[0]


def broken_study(tmp_path: Path, old: str, new: str) -> tuple[Path, str]:
    assert old in STUDY
    text = STUDY.replace(old, new)
    return write(tmp_path, "study.yaml", text), text


# --- the shipped study ----------------------------------------------------------------------


def test_hmd_is_shipped() -> None:
    assert "hmd" in shipped_studies()


def test_shipped_hmd_study_loads_as_the_protocol_says() -> None:
    bundle = load_study("hmd")
    study = bundle.study
    assert study.id == "hmd"
    assert study.title == "HMD human evaluation: a video-game shopping assistant"
    assert study.systems == (
        DemoSystem(type="demo", id="shop-v1", variant="v1"),
        DemoSystem(type="demo", id="shop-v0", variant="v0"),
    )
    assert study.scenarios == ("hmd-gift",)
    assert isinstance(study.design, Design)
    assert (study.timing.reminder_after, study.timing.abandon_after) == (600, 3600)
    assert (
        "By taking part to this evaluation you agree that your choices and interaction will be "
        "used for the purposes of the project. No personal data (name, sex, age, ...) will be "
        "used in the study, since a mock profile is used."
    ) in study.texts.consent

    gift = bundle.scenario("hmd-gift")
    assert gift.brief == (
        "Your friend Alex likes adventure games and owns a Linux machine. Find a game for Alex, "
        "check that it is not already on Alex's wishlist, and add it to your own wishlist."
    )
    assert (gift.max_exchanges, gift.time_limit, gift.post_task) == (10, None, ("hmd",))


def test_shipped_hmd_questionnaire_has_the_four_criteria_and_a_comment() -> None:
    hmd = load_study("hmd").questionnaire("hmd")
    assert [item.id for item in hmd.items] == [
        "hmd.understanding",
        "hmd.management",
        "hmd.generation",
        "hmd.usefulness",
        "hmd.comment",
    ]
    scales = [item for item in hmd.items if isinstance(item, ScaleItem)]
    assert len(scales) == 4
    for item in scales:
        assert (item.min, item.max, item.required) == (1, 5, True)
        assert item.labels == {
            1: "Completely disagree",
            2: "Disagree",
            3: "Neutral",
            4: "Agree",
            5: "Completely agree",
        }
        assert item.help and "→ 1" in item.help and "→ 5" in item.help
    understanding, management, generation, usefulness = scales
    assert understanding.text.endswith(
        "When asking the system to search games or comparing them, did it follow your "
        "constraints correctly and complete the task appropriately?"
    )
    assert management.text.endswith(
        "Did the system ask properly for further information or clarification when the task "
        "was unclear?"
    )
    assert generation.text.endswith(
        "Were the system's responses grammatically correct, polite and concise?"
    )
    assert usefulness.text.endswith("Would you consider to use the system again in the future?")
    assert 'System: "Great, what genre would you like to search for?"' in (understanding.help or "")
    comment = hmd.items[-1]
    assert isinstance(comment, TextItem)
    assert not comment.required
    assert comment.text == (
        "Additional comments (optional): please provide any qualitative feedback regarding "
        "the system's performance or your experience."
    )


def test_a_copy_of_the_shipped_study_finds_shipped_scenarios(tmp_path: Path) -> None:
    shipped = files("scenarios") / "library" / "studies" / "hmd.yaml"
    copy = write(tmp_path, "my-study/study.yaml", shipped.read_text(encoding="utf-8"))
    assert load_study(copy).study.id == "hmd"
    assert load_study(str(copy)).scenario("hmd-gift").max_exchanges == 10


def test_files_beside_the_study_come_before_the_library(tmp_path: Path) -> None:
    study = write(tmp_path, "study.yaml", STUDY.replace("[hmd-gift]", "[gift, hmd-gift]"))
    write(tmp_path, "scenarios/gift.yaml", SCENARIO)
    write(tmp_path, "questionnaires/rating.yaml", QUESTIONNAIRE)
    write(tmp_path, "questionnaires/hmd.yaml", QUESTIONNAIRE.replace("rating", "hmd"))
    bundle = load_study(study)
    assert list(bundle.scenarios) == ["gift", "hmd-gift"]
    assert bundle.questionnaire("hmd").title == "Rating"  # the local file, not the shipped one
    assert [item.id for item in bundle.questionnaire("hmd").items] == [
        "hmd.overall",
        "hmd.comment",
    ]
    assert bundle.scenario("gift").post_task == ("rating",)


# --- one problem, its file, line and field ---------------------------------------------------


def test_unknown_key_points_at_the_key_and_lists_the_allowed_fields(tmp_path: Path) -> None:
    study, text = broken_study(tmp_path, "    variant: v0\n", "    variant: v0\n    colour: red\n")
    problem = only_problem(study)
    assert (problem.file, problem.line, problem.field) == (
        study,
        line_of(text, "colour"),
        "systems[1].colour",
    )
    assert (
        problem.message
        == "unknown field 'colour' (allowed: id, timeout, retries, format, type, variant)"
    )


def test_unknown_top_level_key(tmp_path: Path) -> None:
    study, text = broken_study(tmp_path, "title: My study\n", "title: My study\nsystem: x\n")
    problem = only_problem(study)
    assert (problem.line, problem.field) == (line_of(text, "system: x"), "system")
    assert problem.message.startswith("unknown field 'system' (allowed: id, title, texts, ")


def test_wrong_type(tmp_path: Path) -> None:
    study, text = broken_study(tmp_path, "title: My study", "title: [My, study]")
    problem = only_problem(study)
    assert (problem.line, problem.field) == (line_of(text, "title:"), "title")
    assert problem.message == "Input should be a valid string"


def test_bad_variant(tmp_path: Path) -> None:
    study, text = broken_study(tmp_path, "variant: v0", "variant: v2")
    problem = only_problem(study)
    assert (problem.line, problem.field) == (line_of(text, "variant: v2"), "systems[1].variant")
    assert (
        str(problem) == f"{study}:{problem.line}: systems[1].variant: Input should be 'v1' or 'v0'"
    )


def test_unknown_system_type_points_at_the_type(tmp_path: Path) -> None:
    study, text = broken_study(
        tmp_path, "  - type: demo\n    id: shop-v0", "  - type: dialogflow\n    id: x"
    )
    problem = only_problem(study)
    assert (problem.line, problem.field) == (line_of(text, "type: dialogflow"), "systems[1].type")
    assert (
        problem.message == "unknown type 'dialogflow' (allowed: demo, openai, rasa, http, python)"
    )


def test_missing_required_field_points_at_its_parent(tmp_path: Path) -> None:
    study, text = broken_study(tmp_path, "  declined: Goodbye\n", "")
    problem = only_problem(study)
    assert (problem.line, problem.field) == (line_of(text, "texts:"), "texts.declined")
    assert problem.message == "Field required"


def test_duration_in_words(tmp_path: Path) -> None:
    study, text = broken_study(tmp_path, "reminder_after: 10m", "reminder_after: ten minutes")
    problem = only_problem(study)
    assert (problem.line, problem.field) == (
        line_of(text, "ten minutes"),
        "timing.reminder_after",
    )
    assert problem.message == "'ten minutes' is not a duration such as 90, '90s', '10m' or '1h'"


def test_yes_is_not_a_duration(tmp_path: Path) -> None:
    study, text = broken_study(tmp_path, "reminder_after: 10m", "reminder_after: yes")
    problem = only_problem(study)
    assert (problem.line, problem.field) == (line_of(text, "yes"), "timing.reminder_after")


def test_abandon_not_after_reminder(tmp_path: Path) -> None:
    study, text = broken_study(tmp_path, "abandon_after: 1h", "abandon_after: 5m")
    problem = only_problem(study)
    assert (problem.line, problem.field) == (line_of(text, "abandon_after"), "timing.abandon_after")
    assert "must be longer than reminder_after" in problem.message


def test_duplicate_system_ids(tmp_path: Path) -> None:
    study, text = broken_study(tmp_path, "id: shop-v0", "id: shop-v1")
    problem = only_problem(study)
    assert (problem.line, problem.field) == (line_of(text, "id: shop-v1", 2), "systems[1].id")
    assert problem.message == "system id 'shop-v1' is already used by systems[0]"


def test_missing_scenario_names_where_it_looked(tmp_path: Path) -> None:
    study, text = broken_study(tmp_path, "[hmd-gift]", "[hmd-gift, nowhere]")
    problem = only_problem(study)
    assert (problem.file, problem.line, problem.field) == (
        study,
        line_of(text, "nowhere"),
        "scenarios[1]",
    )
    assert str(tmp_path / "scenarios" / "nowhere.yaml") in problem.message
    assert "scenarios/library/scenarios/nowhere.yaml" in problem.message


def test_scenario_listed_twice(tmp_path: Path) -> None:
    study, _ = broken_study(tmp_path, "[hmd-gift]", "[hmd-gift, hmd-gift]")
    problem = only_problem(study)
    assert problem.field == "scenarios[1]"
    assert "listed twice" in problem.message


def test_scenario_reference_cannot_be_a_path(tmp_path: Path) -> None:
    write(tmp_path, "secret.yaml", SCENARIO.replace("id: gift", "id: ../secret"))
    study, _ = broken_study(tmp_path, "[hmd-gift]", "[../secret]")
    problem = only_problem(study)
    assert problem.field == "scenarios[0]"
    assert "is not a scenario id" in problem.message


def test_missing_questionnaire_is_told_in_the_scenario_file(tmp_path: Path) -> None:
    study = write(tmp_path, "study.yaml", STUDY.replace("[hmd-gift]", "[gift]"))
    scenario = write(tmp_path, "scenarios/gift.yaml", SCENARIO)
    problem = only_problem(study)
    assert (problem.file, problem.line, problem.field) == (
        scenario,
        line_of(SCENARIO, "post_task"),
        "post_task[0]",
    )
    assert problem.message.startswith("no questionnaire 'rating': neither ")
    assert "questionnaires/library/rating.yaml" in problem.message


def test_missing_post_study_questionnaire(tmp_path: Path) -> None:
    study, text = broken_study(
        tmp_path, "scenarios: [hmd-gift]\n", "scenarios: [hmd-gift]\npost_study: [exit]\n"
    )
    problem = only_problem(study)
    assert (problem.line, problem.field) == (line_of(text, "post_study"), "post_study[0]")


def test_scale_labels_missing_a_point(tmp_path: Path) -> None:
    study = write(tmp_path, "study.yaml", STUDY.replace("[hmd-gift]", "[gift]"))
    write(tmp_path, "scenarios/gift.yaml", SCENARIO)
    text = QUESTIONNAIRE.replace("3: fair, ", "")
    questionnaire = write(tmp_path, "questionnaires/rating.yaml", text)
    problem = only_problem(study)
    assert (problem.file, problem.line, problem.field) == (
        questionnaire,
        line_of(text, "labels"),
        "items[0].labels",
    )
    assert problem.message == "labels must name every point from 1 to 5; missing [3]"


def test_unknown_key_in_a_text_item_is_not_mistaken_for_its_tag(tmp_path: Path) -> None:
    text = QUESTIONNAIRE + "    colour: red\n"
    path = write(tmp_path, "rating.yaml", text)
    with pytest.raises(StudyError) as caught:
        load_questionnaire(path)
    [problem] = caught.value.problems
    assert (problem.line, problem.field) == (line_of(text, "colour"), "items[1].colour")
    assert problem.message == (
        "unknown field 'colour' (allowed: id, text, required, help, examples, construct, when,"
        " type, max_length)"
    )


def test_duplicate_item_ids(tmp_path: Path) -> None:
    text = QUESTIONNAIRE.replace("rating.comment", "rating.overall")
    path = write(tmp_path, "rating.yaml", text)
    with pytest.raises(StudyError) as caught:
        load_questionnaire(path)
    [problem] = caught.value.problems
    assert (problem.line, problem.field) == (line_of(text, "rating.overall", 2), "items[1].id")


def test_yaml_syntax_error_gives_the_line(tmp_path: Path) -> None:
    study, text = broken_study(tmp_path, "  consent: Do you agree?", "  consent: Do you: agree?")
    problem = only_problem(study)
    assert (problem.line, problem.field) == (line_of(text, "consent"), "")
    assert problem.message.startswith("YAML syntax error: mapping values are not allowed here")
    assert "column" in problem.message


def test_tab_indentation_is_explained(tmp_path: Path) -> None:
    study, text = broken_study(tmp_path, "  welcome: Hello", "\twelcome: Hello")
    problem = only_problem(study)
    assert problem.line == line_of(text, "welcome")
    assert "spaces, not tabs" in problem.message


def test_duplicate_key(tmp_path: Path) -> None:
    study, text = broken_study(tmp_path, "title: My study\n", "title: My study\ntitle: Again\n")
    problem = only_problem(study)
    assert (problem.line, problem.field) == (line_of(text, "title: Again"), "title")
    assert problem.message == (
        f"'title' appears twice (first on line {line_of(text, 'title: My')}); "
        "only the last one would count"
    )


def test_scenario_id_must_match_its_file_name(tmp_path: Path) -> None:
    study = write(tmp_path, "study.yaml", STUDY.replace("[hmd-gift]", "[gift]"))
    write(tmp_path, "scenarios/gift.yaml", SCENARIO.replace("id: gift", "id: present"))
    write(tmp_path, "questionnaires/rating.yaml", QUESTIONNAIRE)
    problem = only_problem(study)
    assert (problem.file.name, problem.line, problem.field) == ("gift.yaml", 1, "id")
    assert problem.message == "id 'present' does not match 'gift', the name this file is used by"


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("", None, "the file is empty"),
        ("# only a comment\n", None, "the file is empty"),
        ("- id: x\n", 1, "the top level must be a mapping of fields such as 'id: ...', not a list"),
        ("just words\n", 1, "the top level must be a mapping of fields such as 'id: ...', not a "),
    ],
)
def test_empty_or_shapeless_files(
    tmp_path: Path, text: str, line: int | None, message: str
) -> None:
    problem = only_problem(write(tmp_path, "study.yaml", text))
    assert problem.line == line
    assert problem.message.startswith(message)


def test_missing_study_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    problem = only_problem(missing)
    assert (problem.file, problem.line, problem.message) == (missing, None, "file not found")
    assert str(problem) == f"{missing}: file not found"


def test_unknown_shipped_study_lists_the_shipped_ones() -> None:
    problem = only_problem("no-such-study")
    assert problem.message == (
        "no study file 'no-such-study' and no shipped study of that name (shipped: hmd)"
    )


# --- many problems at once -------------------------------------------------------------------


def test_every_problem_in_every_file_is_reported(tmp_path: Path) -> None:
    text = (
        STUDY.replace("variant: v0", "variant: v9")
        .replace("reminder_after: 10m", "reminder_after: ten minutes")
        .replace("[hmd-gift]", "[gift, missing]")
        .replace("title: My study\n", "title: My study\nfavourite: 1\n")
    )
    study = write(tmp_path, "study.yaml", text)
    scenario_text = SCENARIO.replace("max_exchanges: 5", "max_exchanges: 0")
    scenario = write(tmp_path, "scenarios/gift.yaml", scenario_text)
    questionnaire_text = QUESTIONNAIRE.replace("    text: Anything else?\n", "")
    questionnaire = write(tmp_path, "questionnaires/rating.yaml", questionnaire_text)

    found = [(p.file, p.line, p.field) for p in problems_of(study)]
    assert found == [
        (study, line_of(text, "favourite"), "favourite"),
        (study, line_of(text, "variant: v9"), "systems[1].variant"),
        (study, line_of(text, "scenarios:"), "scenarios[1]"),
        (study, line_of(text, "ten minutes"), "timing.reminder_after"),
        (scenario, line_of(scenario_text, "max_exchanges"), "max_exchanges"),
        (questionnaire, line_of(questionnaire_text, "- type: text"), "items[1].text"),
    ]


def test_study_error_message_lists_every_problem(tmp_path: Path) -> None:
    study, _ = broken_study(tmp_path, "variant: v0", "variant: v2\n    extra: 1")
    with pytest.raises(StudyError) as caught:
        load_study(study)
    assert len(caught.value.problems) == 2
    assert str(caught.value).splitlines() == [str(p) for p in caught.value.problems]


# --- single files ----------------------------------------------------------------------------


def test_load_scenario_and_questionnaire(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, "gift.yaml", SCENARIO))
    assert (scenario.id, scenario.max_exchanges) == ("gift", 5)
    questionnaire = load_questionnaire(str(write(tmp_path, "rating.yaml", QUESTIONNAIRE)))
    assert [item.type for item in questionnaire.items] == ["scale", "text"]


def test_load_scenario_reports_a_bad_time_limit(tmp_path: Path) -> None:
    text = SCENARIO + "time_limit: forever\n"
    with pytest.raises(StudyError) as caught:
        load_scenario(write(tmp_path, "gift.yaml", text))
    [problem] = caught.value.problems
    assert (problem.line, problem.field) == (line_of(text, "forever"), "time_limit")


def test_problem_without_a_field_reads_naturally() -> None:
    problem = Problem(Path("studies/my.yaml"), 3, "", "YAML syntax error: x")
    assert str(problem) == "studies/my.yaml:3: YAML syntax error: x"


def test_problems_come_file_by_file_in_the_order_files_were_opened(tmp_path: Path) -> None:
    study = write(tmp_path, "study.yaml", STUDY.replace("[hmd-gift]", "[gift, missing]"))
    scenario = write(tmp_path, "scenarios/gift.yaml", SCENARIO.replace("[rating]", "[hmd]"))
    scenario.write_text(scenario.read_text() + "colour: red\n")
    assert [(p.file, p.field) for p in problems_of(study)] == [
        (study, "scenarios[1]"),
        (scenario, "colour"),
    ]
