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
    load_stimuli,
    load_study,
    shipped_studies,
)
from scenarios.models import Design, Stimulus
from scenarios.systems import DemoSystem
from tests.conftest import VARIANTS

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


def test_a_field_of_another_system_type(tmp_path: Path) -> None:
    study, text = broken_study(tmp_path, "    variant: v0\n", "    variant: v0\n    model: gpt\n")
    problem = only_problem(study)
    assert (problem.line, problem.field) == (line_of(text, "model: gpt"), "systems[1].model")
    assert problem.message.startswith(
        "unknown field 'model' for type 'demo': only type 'openai' has it (allowed: id, "
    )


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
        == "unknown field 'colour' (allowed: id, timeout, retries, format, family, type, variant)"
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
    assert str(problem) == f"{study}:{problem.line}: systems[1].variant: {VARIANTS}"


def test_unknown_system_type_points_at_the_type(tmp_path: Path) -> None:
    study, text = broken_study(
        tmp_path, "  - type: demo\n    id: shop-v0", "  - type: dialogflow\n    id: x"
    )
    problem = only_problem(study)
    assert (problem.line, problem.field) == (line_of(text, "type: dialogflow"), "systems[1].type")
    assert (
        problem.message
        == "unknown type 'dialogflow' (allowed: demo, openai, rasa, http, python, wizard)"
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
        "no study file 'no-such-study' and no shipped study of that name "
        f"(shipped: {', '.join(shipped_studies())})"
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
    assert str(caught.value).splitlines() == [
        *(str(p) for p in caught.value.problems),
        "2 problems found.",
    ]


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


# --- questionnaires named from every place ---------------------------------------------------

RATING_SCENARIO = """\
id: sentences
kind: rating
title: Rate sentences
brief: Rate each sentence.
stimuli: rows.csv
stimulus_template: "Meaning: {mr}\\nSentence: {text}"
rate_with: [rating]
"""

ROWS_CSV = (
    'id,mr,text\na1,"name[The Eagle], area[centre]",The Eagle is central.\na2,x,"Two\nlines"\n'
)


def study_with(tmp_path: Path, extra: str = "", scenarios: str = "[gift]") -> tuple[Path, str]:
    """A study of local files: the gift scenario, the rating questionnaire, ``extra`` keys."""
    text = STUDY.replace("[hmd-gift]", scenarios) + extra
    write(tmp_path, "scenarios/gift.yaml", SCENARIO)
    write(tmp_path, "questionnaires/rating.yaml", QUESTIONNAIRE)
    return write(tmp_path, "study.yaml", text), text


@pytest.mark.parametrize("key", ["screening", "post_study"])
def test_missing_study_level_questionnaire(tmp_path: Path, key: str) -> None:
    study, text = study_with(tmp_path, f"{key}: [rating, absent]\n")
    problem = only_problem(study)
    assert (problem.file, problem.line, problem.field) == (study, line_of(text, key), f"{key}[1]")
    assert problem.message.startswith("no questionnaire 'absent': neither ")


@pytest.mark.parametrize("key", ["exchange", "post_task"])
def test_missing_scenario_level_questionnaire(tmp_path: Path, key: str) -> None:
    study, _ = study_with(tmp_path)
    text = SCENARIO.replace("post_task: [rating]\n", f"{key}: [absent]\n")
    scenario = write(tmp_path, "scenarios/gift.yaml", text)
    problem = only_problem(study)
    assert (problem.file, problem.line, problem.field) == (
        scenario,
        line_of(text, f"{key}:"),
        f"{key}[0]",
    )
    assert "questionnaires/library/absent.yaml" in problem.message


def test_missing_rate_with_questionnaire(tmp_path: Path) -> None:
    study, _ = study_with(tmp_path, scenarios="[sentences]")
    text = RATING_SCENARIO.replace("[rating]", "[rating, absent]")
    scenario = write(tmp_path, "scenarios/sentences.yaml", text)
    write(tmp_path, "scenarios/rows.csv", ROWS_CSV)
    problem = only_problem(study)
    assert (problem.file, problem.line, problem.field) == (
        scenario,
        line_of(text, "rate_with"),
        "rate_with[1]",
    )


def test_questionnaires_from_every_place_are_loaded(tmp_path: Path) -> None:
    study, _ = study_with(tmp_path, "post_study: [hmd]\n", scenarios="[gift, sentences]")
    write(tmp_path, "scenarios/gift.yaml", SCENARIO + "exchange: [reply]\n")
    write(tmp_path, "questionnaires/reply.yaml", REPLY)
    write(tmp_path, "scenarios/sentences.yaml", RATING_SCENARIO.replace("[rating]", "[sentence]"))
    write(tmp_path, "questionnaires/sentence.yaml", QUESTIONNAIRE.replace("rating", "sentence"))
    write(tmp_path, "scenarios/rows.csv", ROWS_CSV)
    bundle = load_study(study)
    assert sorted(bundle.questionnaires) == ["hmd", "rating", "reply", "sentence"]
    assert bundle.scenario("gift").exchange == ("reply",)
    assert [s.id for s in bundle.stimuli["sentences"]] == ["a1", "a2"]


# --- mistakes inside a questionnaire ---------------------------------------------------------

REPLY = """\
id: reply
title: This reply
items:
  - type: thumbs
    id: reply.good
    text: Good reply?
  - type: multi_choice
    id: reply.problems
    text: What went wrong?
    when:
      item: reply.good
      equals: 0
    options:
      - {value: off_topic, label: Off-topic}
      - {value: rude, label: Rude}
"""


def questionnaire_problem(tmp_path: Path, text: str) -> Problem:
    """The single problem of a questionnaire loaded through a study, in its own file."""
    study, _ = study_with(tmp_path)
    questionnaire = write(tmp_path, "questionnaires/rating.yaml", text)
    problem = only_problem(study)
    assert problem.file == questionnaire
    return problem


def test_scale_without_labels(tmp_path: Path) -> None:
    text = QUESTIONNAIRE.replace("    labels: {1: bad, 2: poor, 3: fair, 4: good, 5: great}\n", "")
    problem = questionnaire_problem(tmp_path, text)
    assert (problem.line, problem.field) == (line_of(text, "- type: scale"), "items[0].labels")
    assert problem.message.startswith("a scale needs a label for every point")


def test_reversed_free_text_item(tmp_path: Path) -> None:
    text = QUESTIONNAIRE + "    reverse: true\n"
    problem = questionnaire_problem(tmp_path, text)
    assert (problem.line, problem.field) == (line_of(text, "reverse"), "items[1].reverse")
    assert problem.message == "only scale items can be reverse-coded, not text items"


def test_field_of_another_item_type_says_which_type_has_it(tmp_path: Path) -> None:
    text = QUESTIONNAIRE + "    options: [{value: 1, label: x}, {value: 2, label: y}]\n"
    problem = questionnaire_problem(tmp_path, text)
    assert (problem.line, problem.field) == (line_of(text, "options"), "items[1].options")
    assert problem.message.startswith(
        "unknown field 'options' for type 'text': only types 'choice', 'multi_choice', 'ranking'"
        " have it"
    )


def test_skip_condition_on_a_later_item(tmp_path: Path) -> None:
    text = QUESTIONNAIRE.replace(
        "    text: How was it?\n",
        "    text: How was it?\n    when:\n      item: rating.comment\n      equals: 1\n",
    )
    problem = questionnaire_problem(tmp_path, text)
    assert (problem.line, problem.field) == (
        line_of(text, "item: rating.comment"),
        "items[0].when.item",
    )
    assert problem.message == "'rating.comment' comes later: a condition can only look back"


def test_skip_condition_on_a_missing_item(tmp_path: Path) -> None:
    text = REPLY.replace("item: reply.good", "item: reply.gone")
    problem = questionnaire_problem(tmp_path, text.replace("reply", "rating"))
    assert (problem.line, problem.field) == (line_of(text, "reply.gone"), "items[1].when.item")
    assert problem.message == "no item 'rating.gone' here"


def test_condition_value_that_is_no_answer_points_at_the_value(tmp_path: Path) -> None:
    text = REPLY.replace("reply", "rating").replace("equals: 0", "equals: 2")
    problem = questionnaire_problem(tmp_path, text)
    assert (problem.line, problem.field) == (line_of(text, "equals: 2"), "items[1].when.equals")
    assert problem.message == "2 is not an answer of 'rating.good'"


def test_any_of_value_that_is_no_answer_points_at_the_entry(tmp_path: Path) -> None:
    text = REPLY.replace("reply", "rating").replace(
        "equals: 0", "any_of:\n        - 0\n        - 5"
    )
    problem = questionnaire_problem(tmp_path, text)
    assert (problem.line, problem.field) == (line_of(text, "- 5"), "items[1].when.any_of[1]")


def test_eligibility_value_that_is_no_answer(tmp_path: Path) -> None:
    text = (
        REPLY.replace("reply", "rating")
        + "eligible_if:\n  - item: rating.problems\n    any_of: [rude, angry]\n"
    )
    study, _ = study_with(tmp_path, "screening: [rating]\n")
    write(tmp_path, "scenarios/gift.yaml", SCENARIO.replace("post_task: [rating]\n", ""))
    questionnaire = write(tmp_path, "questionnaires/rating.yaml", text)
    problem = only_problem(study)
    assert (problem.file, problem.line, problem.field) == (
        questionnaire,
        line_of(text, "any_of: [rude"),
        "eligible_if[0].any_of[1]",
    )
    assert problem.message == "'angry' is not an answer of 'rating.problems'"


def test_two_questionnaires_of_a_study_share_an_item_id(tmp_path: Path) -> None:
    study, _ = study_with(tmp_path, "post_study: [exit]\n")
    text = QUESTIONNAIRE.replace("id: rating\n", "id: exit\n").replace("rating.comment", "x.y")
    exit_file = write(tmp_path, "questionnaires/exit.yaml", text)
    problem = only_problem(study)
    assert (problem.file, problem.line, problem.field) == (
        exit_file,
        line_of(text, "rating.overall"),
        "items[0].id",
    )
    first = tmp_path / "questionnaires" / "rating.yaml"
    assert problem.message == (
        f"item id 'rating.overall' is also used by questionnaire 'rating' "
        f"({first}:{line_of(QUESTIONNAIRE, 'rating.overall')}); answers are stored by item id, "
        "so every item of a study needs its own id"
    )


# --- eligibility belongs to screening --------------------------------------------------------

ELIGIBLE = "eligible_if:\n  - {item: rating.overall, any_of: [4, 5]}\n"


def test_eligibility_in_screening_is_fine(tmp_path: Path) -> None:
    study, _ = study_with(tmp_path, "screening: [screen]\n")
    write(
        tmp_path,
        "questionnaires/screen.yaml",
        QUESTIONNAIRE.replace("rating", "screen") + ELIGIBLE.replace("rating", "screen"),
    )
    assert load_study(study).questionnaire("screen").eligible_if


def test_eligibility_outside_screening_is_told_at_the_reference(tmp_path: Path) -> None:
    study, _ = study_with(tmp_path)
    write(tmp_path, "questionnaires/rating.yaml", QUESTIONNAIRE + ELIGIBLE)
    scenario = tmp_path / "scenarios" / "gift.yaml"
    problem = only_problem(study)
    assert (problem.file, problem.line, problem.field) == (
        scenario,
        line_of(SCENARIO, "post_task"),
        "post_task[0]",
    )
    assert problem.message == (
        "questionnaire 'rating' has eligible_if, which only screening questionnaires may have:"
        " list it under the study's screening instead"
    )


def test_eligibility_in_post_study_and_screening_at_once(tmp_path: Path) -> None:
    study, text = study_with(tmp_path, "screening: [screen]\npost_study: [screen]\n")
    write(tmp_path, "scenarios/gift.yaml", SCENARIO.replace("post_task: [rating]\n", ""))
    screen = QUESTIONNAIRE.replace("rating", "screen") + ELIGIBLE.replace("rating", "screen")
    write(tmp_path, "questionnaires/screen.yaml", screen)
    problem = only_problem(study)
    assert (problem.file, problem.line, problem.field) == (
        study,
        line_of(text, "post_study"),
        "post_study[0]",
    )


# --- translations ----------------------------------------------------------------------------


def test_study_translation_of_an_unknown_sentence(tmp_path: Path) -> None:
    study, text = study_with(
        tmp_path, "translations:\n  it:\n    welcome: Ciao\n    welcom: Ciao\n"
    )
    problem = only_problem(study)
    assert (problem.line, problem.field) == (line_of(text, "welcom:"), "translations.it.welcom")
    assert problem.message == "no sentence 'welcom' in texts"


def test_scenario_translation_of_a_field_that_is_not_a_text(tmp_path: Path) -> None:
    study, _ = study_with(tmp_path)
    text = SCENARIO + "translations:\n  it:\n    title: Un regalo\n    max_exchanges: 3\n"
    scenario = write(tmp_path, "scenarios/gift.yaml", text)
    problem = only_problem(study)
    assert (problem.file, problem.line, problem.field) == (
        scenario,
        line_of(text, "max_exchanges: 3"),
        "translations.it.max_exchanges",
    )
    assert problem.message == (
        "'max_exchanges' cannot be translated (translatable: title, brief, opening_line,"
        " closing_line)"
    )


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("Italian", "'Italian' is not a language code"),
        ("pt-BR", "'pt-BR' is not a language code"),
        ("en", "'en' is the study's own language (language: en)"),
    ],
)
def test_translation_under_a_key_telegram_never_sends(
    tmp_path: Path, code: str, message: str
) -> None:
    study, text = study_with(tmp_path, f"translations:\n  {code}:\n    welcome: Hi\n")
    problem = only_problem(study)
    assert (problem.line, problem.field) == (line_of(text, f"{code}:"), f"translations.{code}")
    assert problem.message.startswith(message)


def test_scenario_translation_in_the_study_language(tmp_path: Path) -> None:
    study, _ = study_with(tmp_path, "language: it\n")
    text = SCENARIO + "translations:\n  it:\n    title: Un regalo\n"
    scenario = write(tmp_path, "scenarios/gift.yaml", text)
    problem = only_problem(study)
    assert (problem.file, problem.line, problem.field) == (
        scenario,
        line_of(text, "it:"),
        "translations.it",
    )


def test_study_language_must_be_a_code(tmp_path: Path) -> None:
    study, text = study_with(tmp_path, "language: English\n")
    problem = only_problem(study)
    assert (problem.line, problem.field) == (line_of(text, "language"), "language")


# --- design ----------------------------------------------------------------------------------


def test_more_tasks_per_participant_than_scenarios(tmp_path: Path) -> None:
    extra = "design:\n  type: balanced\n  tasks_per_participant: 3\n"
    study, text = study_with(tmp_path, extra, scenarios="[gift, hmd-gift]")
    problem = only_problem(study)
    assert (problem.file, problem.line, problem.field) == (
        study,
        line_of(text, "tasks_per_participant"),
        "design.tasks_per_participant",
    )
    assert problem.message == "3 tasks per participant, but the study lists only 2 scenarios"


def test_as_many_tasks_per_participant_as_scenarios(tmp_path: Path) -> None:
    extra = "design:\n  type: balanced\n  tasks_per_participant: 2\n"
    study, _ = study_with(tmp_path, extra, scenarios="[gift, hmd-gift]")
    assert load_study(study).study.design.tasks_per_participant == 2


# --- rating tasks and their stimuli ----------------------------------------------------------


def rating_study(
    tmp_path: Path,
    scenario: str = RATING_SCENARIO,
    rows: str | None = ROWS_CSV,
    name: str = "rows.csv",
) -> tuple[Path, Path, Path]:
    """A study with one rating task; the study, scenario and stimuli paths."""
    study, _ = study_with(tmp_path, scenarios="[sentences]")
    scenario_file = write(tmp_path, "scenarios/sentences.yaml", scenario)
    rows_file = tmp_path / "scenarios" / name
    if rows is not None:
        write(tmp_path, f"scenarios/{name}", rows)
    return study, scenario_file, rows_file


def test_stimuli_from_csv(tmp_path: Path) -> None:
    study, _, _ = rating_study(tmp_path)
    bundle = load_study(study)
    assert bundle.scenario("sentences").kind == "rating"
    assert bundle.stimuli["sentences"] == (
        Stimulus(
            id="a1", fields={"mr": "name[The Eagle], area[centre]", "text": "The Eagle is central."}
        ),
        Stimulus(id="a2", fields={"mr": "x", "text": "Two\nlines"}),
    )


def test_csv_without_id_column_numbers_its_rows(tmp_path: Path) -> None:
    rows = "\ufeffmr,text\n\nx,one\ny,two\n"  # a spreadsheet's BOM, a blank line
    study, _, _ = rating_study(tmp_path, rows=rows)
    stimuli = load_study(study).stimuli["sentences"]
    assert [(s.id, s.fields["mr"]) for s in stimuli] == [("1", "x"), ("2", "y")]


def test_stimuli_from_jsonl(tmp_path: Path) -> None:
    rows = (
        '{"id": "e1", "mr": "name[A]", "text": "A."}\n'
        "\n"
        '{"id": 7, "mr": "m", "text": "B", "score": 1.5}\n'
    )
    scenario = RATING_SCENARIO.replace("rows.csv", "rows.jsonl")
    study, _, _ = rating_study(tmp_path, scenario, rows, "rows.jsonl")
    stimuli = load_study(study).stimuli["sentences"]
    assert stimuli == (
        Stimulus(id="e1", fields={"mr": "name[A]", "text": "A."}),
        Stimulus(id="7", fields={"mr": "m", "text": "B", "score": "1.5"}),
    )


def test_jsonl_without_ids_numbers_its_objects(tmp_path: Path) -> None:
    rows = '{"mr": "a", "text": "A"}\n{"mr": "b", "text": "B"}\n'
    scenario = RATING_SCENARIO.replace("rows.csv", "rows.jsonl")
    study, _, _ = rating_study(tmp_path, scenario, rows, "rows.jsonl")
    assert [s.id for s in load_study(study).stimuli["sentences"]] == ["1", "2"]


def test_rating_task_without_stimuli_or_rate_with(tmp_path: Path) -> None:
    text = RATING_SCENARIO.replace("stimuli: rows.csv\n", "").replace("rate_with: [rating]\n", "")
    text = text.replace('stimulus_template: "Meaning: {mr}\\nSentence: {text}"\n', "")
    study, scenario, _ = rating_study(tmp_path, text)
    problems = problems_of(study)
    assert [(p.file, p.line, p.field) for p in problems] == [
        (scenario, line_of(text, "kind"), "stimuli"),
        (scenario, line_of(text, "kind"), "rate_with"),
    ]
    assert problems[0].message.startswith("a rating task (kind: rating) needs stimuli: ")


def test_dialogue_with_rating_fields(tmp_path: Path) -> None:
    study, _ = study_with(tmp_path)
    text = SCENARIO + "stimuli: rows.csv\nrate_with: [rating]\n"
    scenario = write(tmp_path, "scenarios/gift.yaml", text)
    assert [(p.file, p.line, p.field, p.message) for p in problems_of(study)] == [
        (
            scenario,
            line_of(text, "stimuli"),
            "stimuli",
            "stimuli is for rating tasks: add 'kind: rating', or remove it",
        ),
        (
            scenario,
            line_of(text, "rate_with"),
            "rate_with",
            "rate_with is for rating tasks: add 'kind: rating', or remove it",
        ),
    ]


def test_a_side_by_side_task_needs_two_programmed_systems_and_no_exchange_ratings(
    tmp_path: Path,
) -> None:
    text = STUDY.replace("[hmd-gift]", "[gift]").replace(
        "  - type: demo\n    id: shop-v0\n    variant: v0\n", "  - type: wizard\n    id: human\n"
    )
    study = write(tmp_path, "study.yaml", text)
    write(tmp_path, "questionnaires/rating.yaml", QUESTIONNAIRE)
    side = "id: gift\ntitle: A gift\nkind: side_by_side\nbrief: Find a gift.\nexchange: []\n"
    scenario = write(tmp_path, "scenarios/gift.yaml", side)
    assert [(p.file, p.line, p.field, p.message) for p in problems_of(study)] == [
        (
            study,
            line_of(text, "systems"),
            "systems",
            "scenario 'gift' is side by side: it needs two systems that are not wizards,"
            " and the study has 1",
        ),
        (
            scenario,
            line_of(side, "exchange"),
            "exchange",
            "side by side, each turn is a vote between two replies: no exchange ratings",
        ),
    ]


def test_rating_task_with_dialogue_fields(tmp_path: Path) -> None:
    text = RATING_SCENARIO + "max_exchanges: 4\n"
    study, scenario, _ = rating_study(tmp_path, text)
    problem = only_problem(study)
    assert (problem.file, problem.line, problem.field) == (
        scenario,
        line_of(text, "max_exchanges"),
        "max_exchanges",
    )
    assert problem.message == "a rating task has no dialogue: max_exchanges is for kind: dialogue"


def test_missing_stimuli_file(tmp_path: Path) -> None:
    study, scenario, rows = rating_study(tmp_path, rows=None)
    problem = only_problem(study)
    assert (problem.file, problem.line, problem.field) == (rows, None, "")
    line = line_of(RATING_SCENARIO, "stimuli:")
    assert problem.message == f"file not found (named by stimuli on line {line} of {scenario})"


@pytest.mark.parametrize("name", ["../rows.csv", "/etc/rows.csv", "rows.xlsx"])
def test_stimuli_must_be_a_csv_or_jsonl_file_beside_the_scenario(tmp_path: Path, name: str) -> None:
    text = RATING_SCENARIO.replace("rows.csv", name)
    study, scenario, _ = rating_study(tmp_path, text)
    problem = only_problem(study)
    assert (problem.file, problem.line, problem.field) == (
        scenario,
        line_of(text, "stimuli:"),
        "stimuli",
    )


def test_stimuli_in_a_subfolder(tmp_path: Path) -> None:
    study, _, _ = rating_study(
        tmp_path, RATING_SCENARIO.replace("rows.csv", "data/rows.csv"), name="data/rows.csv"
    )
    assert len(load_study(study).stimuli["sentences"]) == 2


@pytest.mark.parametrize(
    ("rows", "line", "field", "message"),
    [
        ("id,mr,text\na1,x,y\na2,x\n", 3, "", "this row has 2 values but the header has 3 columns"),
        ("id,mr,text\na1,x,y\na1,z,w\n", 3, "id", "id 'a1' is already used on line 2"),
        ("id,mr,text\n,x,y\n", 2, "id", "the id is empty"),
        ('id,mr,text\na1,"x\ny",z\na2,"open,w\n', 4, "", "CSV syntax error: "),
        ("id,mr,text,mr\na1,x,y,z\n", 1, "mr", "column 'mr' appears twice"),
        ("id,mr,text\n", 1, "", "has no rows to rate"),
        (
            "id,text\na1,x\n",
            1,
            "",
            "no 'mr' for {mr} of the scenario's stimulus_template (columns: text)",
        ),
    ],
)
def test_problems_in_a_csv_file(
    tmp_path: Path, rows: str, line: int, field: str, message: str
) -> None:
    study, _, rows_file = rating_study(tmp_path, rows=rows)
    problem = only_problem(study)
    assert (problem.file, problem.line, problem.field) == (rows_file, line, field)
    assert problem.message.startswith(message)


@pytest.mark.parametrize(
    ("rows", "line", "field", "message"),
    [
        (
            '{"mr": "a", "text": "A"}\n{"mr": "b", "text": "B"\n',
            2,
            "",
            "JSON syntax error: Expecting ',' delimiter (column 24)",
        ),
        ('{"mr": "a", "text": "A"}\n["b"]\n', 2, "", "each line must be one JSON object"),
        ('{"mr": "a", "text": ["A"]}\n', 1, "text", "'text' must be text or a number, not a list"),
        (
            '{"id": "1", "mr": "a", "text": "A"}\n{"mr": "b", "text": "B"}\n',
            2,
            "id",
            "this line has no 'id'",
        ),
        (
            '{"mr": "a", "text": "A"}\n{"mr": "b"}\n{"mr": "c"}\n',
            2,
            "",
            "no 'text' for {text} of the scenario's stimulus_template (nor on 1 more lines)",
        ),
        ("\n\n", None, "", "has no rows to rate"),
    ],
)
def test_problems_in_a_jsonl_file(
    tmp_path: Path, rows: str, line: int | None, field: str, message: str
) -> None:
    scenario = RATING_SCENARIO.replace("rows.csv", "rows.jsonl")
    study, _, rows_file = rating_study(tmp_path, scenario, rows, "rows.jsonl")
    problem = only_problem(study)
    assert (problem.file, problem.line, problem.field) == (rows_file, line, field)
    assert problem.message.startswith(message)


def test_malformed_stimulus_template(tmp_path: Path) -> None:
    text = RATING_SCENARIO.replace("{mr}", "{0}")
    study, scenario, _ = rating_study(tmp_path, text)
    problem = only_problem(study)
    assert (problem.file, problem.line, problem.field) == (
        scenario,
        line_of(text, "stimulus_template"),
        "stimulus_template",
    )
    assert problem.message.startswith("{0} is not a column")


def test_load_stimuli_alone(tmp_path: Path) -> None:
    rows = write(tmp_path, "rows.csv", ROWS_CSV)
    assert [s.id for s in load_stimuli(rows, "{mr}")] == ["a1", "a2"]
    with pytest.raises(StudyError) as caught:
        load_stimuli(rows, "{missing}")
    [problem] = caught.value.problems
    assert (problem.file, problem.line) == (rows, 1)


def test_a_shipped_rating_task_reads_its_stimuli_from_the_library(tmp_path: Path) -> None:
    library = files("scenarios") / "library" / "scenarios"
    rating = sorted(
        entry.name.removesuffix(".yaml")
        for entry in library.iterdir()
        if entry.name.endswith(".yaml") and "\nkind: rating" in entry.read_text(encoding="utf-8")
    )
    assert rating, "the library ships a rating task (e2e-nlg-rating): none was found"
    study = write(tmp_path, "study.yaml", STUDY.replace("[hmd-gift]", f"[{rating[0]}]"))
    bundle = load_study(study)
    scenario = bundle.scenario(rating[0])
    assert scenario.stimuli is not None
    assert (library / scenario.stimuli).is_file()
    assert bundle.stimuli[rating[0]]


def test_free_text_in_an_exchange_questionnaire_is_told_at_the_reference(tmp_path: Path) -> None:
    study, _ = study_with(tmp_path)
    text = SCENARIO.replace("post_task: [rating]\n", "exchange: [rating]\n")
    scenario = write(tmp_path, "scenarios/gift.yaml", text)
    problem = only_problem(study)
    assert (problem.file, problem.line, problem.field) == (
        scenario,
        line_of(text, "exchange:"),
        "exchange[0]",
    )
    questionnaire = tmp_path / "questionnaires" / "rating.yaml"
    assert problem.message == (
        f"questionnaire 'rating' has a free-text item ('rating.comment', {questionnaire}:"
        f"{line_of(QUESTIONNAIRE, 'rating.comment')}), which is never asked after a reply "
        "because typed messages go to the system: ask it after the task (post_task) instead"
    )
