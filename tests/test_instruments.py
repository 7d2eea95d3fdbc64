"""The shipped instruments say what their protocols say: items, scales, labels, reverse items,
constructs and skip logic.

The expected wording is hard-coded here, copied from the protocol texts; a further test checks
that every copied string really is in its protocol, read from the verbatim excerpts the
repository ships (``tests/fixtures/protocols``), so that it runs on every clone.
"""

from __future__ import annotations

import html
import re
from importlib.resources import files
from pathlib import Path

import pytest

from questionnaires.models import (
    Questionnaire,
    ScaleItem,
    TextItem,
    YesNoItem,
)
from scenarios.loading import load_questionnaire

LIBRARY = Path(str(files("questionnaires") / "library"))
PROTOCOLS = Path(__file__).resolve().parent / "fixtures" / "protocols"

SHIPPED = {
    "hmd",
    "idial",
    "xrec-exchange",
    "hri-cues-self-report",
    "hri-cues",
    "hri-cues-overall",
    "e2e-nlg",
    "e2e-nlg-screening",
    "preference",
    "acute-eval",
}


def load(name: str) -> Questionnaire:
    return load_questionnaire(LIBRARY / f"{name}.yaml")


def scales(questionnaire: Questionnaire) -> list[ScaleItem]:
    return [item for item in questionnaire.items if isinstance(item, ScaleItem)]


# --- verbatim strings, by protocol file ------------------------------------------------------

IDIAL_STATEMENTS = [
    "The system was efficient in accomplishing the task.",
    "The system quickly provided all the information that I needed.",
    "The system is easy to use.",
    "The system was incoherent when I interacted using a non-standard or unexpected input.",
    "The system has a fluent dialogue.",
    "The system was flexible to my needs.",
    "I am satisfied by my experience.",
    "I would recommend the system.",
    "The system is charming.",
    "I enjoyed the time that I spent using the system.",
]

XREC_QUESTIONS = [
    "Does system recommend a new movie?",
    "Does system provide an explanation?",
    "After reading the explanation, do you know why system recommends these movies to you?",
    "After reading the explanation, do you know what preferences the recommendation based on?",
    "After reading the explanation, do you think the explanation is logically correct?",
    "After reading the explanation, do you think the explanation is contextual?",
    "After reading the explanation, do you trust the recommendations given by system?",
    "After reading the explanation, do you want to try the recommended movies?",
    "After reading the explanation, are you able to quickly determine whether to accept the "
    "recommendations?",
    "Compared to the lack of explanation, do you think the explanation is satisfactory to you?",
    "After checking the information about the recommended movie, do you think the explanation "
    "is suitable?",
    "After checking the information about the recommended movie, do your ratings of the "
    "recommended movies change?",
    "What is your overall rating of the explanation?",
]
XREC_METRICS = [
    "recommendation_rate",
    "explanation_rate",
    "transparency",
    "scrutability",
    "reasonability",
    "coherence",
    "trust",
    "persuasiveness",
    "efficiency",
    "satisfaction",
    "representativeness",
    "effectiveness",
    "overall",
]
# Question number -> its labels, without the protocol's "N point: " prefix.
XREC_LABELS = {
    4: [
        "I don't know.",
        "I need to determine by contextual reasoning.",
        "I can determine directly from the explanation.",
    ],
    5: [
        "I think it is inconsistent with the preceding conversation.",
        "I think it is consistent with the preceding conversation but logically wrong.",
        "I think it is consistent with the preceding conversation and logically right.",
    ],
    6: [
        "I think the explanation is incoherent with the preceding conversation and is out of "
        "context.",
        "I think the explanation is incoherent with some parts of the preceding conversation, "
        "but the whole is still in context.",
        "I think the explanation is coherent with the preceding conversation and is in context.",
    ],
    7: [
        "I don't trust the recommendations at all.",
        "I trust the recommendations a bit.",
        "I fully trust the recommendations.",
    ],
    8: ["I don't want to try at all.", "I want to try a bit.", "I especially want to try."],
    9: ["I'm hard to determine.", "I need time to determine.", "I can determine quickly."],
    10: ["I am not satisfied.", "I am more satisfied.", "I am very satisfied."],
    11: [
        "I think the explanation is inconsistent with the information of recommended movies.",
        "I think the explanation is consistent with the information of recommended movies but "
        "too general.",
        "I think the explanation is consistent and representative of the recommended movie "
        "information.",
    ],
    12: ["A lot of change.", "A little change.", "Almost no change."],
    13: ["Very bad.", "Bad.", "Average.", "Good.", "Perfect."],
}

HRI_SELF_REPORT = {
    "satisfied": "I was satisfied with my conversation with the robot.",
    "fun": "It was fun talking to the robot.",
    "interesting": "The conversation with the robot was interesting.",
    "strange": "It felt strange talking to the robot.",
}
# The final HRI CUES levels: (name, description), as the paper's list gives them.
HRI_LEVELS = {
    1: ("Very low enjoyment", "Discomfort and/or frustration"),
    2: ("Low enjoyment", "Boredom or interaction failure"),
    3: ("Neutral enjoyment", "Politely keeping up the interaction"),
    4: ("High enjoyment", "Smooth and effortless interaction"),
    5: (
        "Very high enjoyment",
        "Immersion in the conversation and/or deeper connection with the robot",
    ),
}
HRI_GUIDANCE = [
    "To rate an exchange higher on the user enjoyment scale (4 or 5), the annotators looked for "
    "different signs of enjoyment, which, for example, were smirking, movement, flow of "
    "conversation (the topic is moving forward), no strain or discomfort,",
    "To rate an exchange lower on the scale (1 or 2), the annotators looked for signs of "
    "dis-enjoyment, which, for example, were low energy, sighing, tiredness, long breaths,",
    "Neutral enjoyment (3) refers to a lack of these cues, in which conversation content (and "
    "context) becomes more relevant, such as having small talk or continuing the conversation "
    "without having much interest in the topic.",
    "In cases where the exchange has cues from multiple scale levels, the annotators determined "
    "the dominant level in that interaction.",
    "when there is discomfort at the beginning (1), but the user continues to politely keep up "
    "the interaction (3), the exchange would be annotated as a 2, the mid-point between the "
    "levels.",
    "since robot failures can lead to amusement, anthropomorphism, or empathy in the user, "
    "thereby increasing user enjoyment.",
]

E2E_DEFINITIONS = {
    "informativeness": "Informativeness is defined as whether the utterance provides all the "
    "information given in the meaning representation and does not give any unnecessary "
    "information.",
    "naturalness": "Naturalness is defined as whether you think the utterance could have been "
    "produced by a native speaker.",
    "quality": "Quality is defined as an overall quality of the utterance, in terms of its "
    "grammatical correctness, fluency and other important factors.",
}
E2E_EXAMPLES = [
    (
        "name[The Eagle], area[city centre]",
        "The Eagle is a Chinese restaurant located in the city centre.",
        "This utterance should be scored as of a low informativeness (it contains the "
        'information that is not provided in the meaning representation - "Chinese '
        'restaurant"), but highly natural (it could have been produced by a native speaker), '
        "and of a high quality (the sentence is grammatically correct and fluent).",
    ),
    (
        "name[The Eagle], area[city centre], pricerange[cheap]",
        "The Eagle are located in the city centre. It is cheap.",
        "This utterance should be scored as highly informative (it contains all the information "
        "provided in the meaning representation), but not very natural (a native speaker would "
        "not produce it) and of a low quality (the sentence is not grammatically correct).",
    ),
    (
        "name[The Eagle], area[city centre], near[Alimentum]",
        "The Eagle is located near Alimentum.",
        "This utterance should be scored as of a low informativeness (it does not contain all "
        "the information provided in the meaning representation, the concept area[city centre] "
        "is missed), but of a high quality (the sentence is grammatically correct and fluent) "
        "and high naturalness (it could have been produced by a native speaker).",
    ),
]
E2E_NATIVE = "Participants must be native speakers of British or American English."

VERBATIM = {
    "idial-evalita-2018.md": [
        *IDIAL_STATEMENTS,
        "(never, rarely, sometimes, often, always)",
        "Questions 3, 4, 7 and 10 of the questionnaire",
    ],
    "xrec-exchange-questionnaire.md": [
        *XREC_QUESTIONS,
        *(
            f"{point} point: {label}"
            for labels in XREC_LABELS.values()
            for point, label in enumerate(labels, start=1)
        ),
    ],
    "hri-cues.md": [
        *HRI_SELF_REPORT.values(),
        *(f"{level} {name} {description}" for level, (name, description) in HRI_LEVELS.items()),
        *HRI_GUIDANCE,
    ],
    "e2e-nlg-utterance-rating.html": [
        *E2E_DEFINITIONS.values(),
        *(part for example in E2E_EXAMPLES for part in example),
        E2E_NATIVE,
    ],
}


def _plain(text: str) -> str:
    """Protocol text without markup, with runs of white space made one space."""
    text = re.sub(r"<[^>]+>", "", text)
    text = html.unescape(text).replace("\xa0", " ").replace("**", "")
    return re.sub(r"\s+", " ", text)


# --- every instrument ------------------------------------------------------------------------


def test_the_library_ships_exactly_these_instruments() -> None:
    assert {path.stem for path in LIBRARY.glob("*.yaml")} == SHIPPED


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_every_instrument_loads_with_its_file_name_as_id(name: str) -> None:
    questionnaire = load(name)
    assert questionnaire.id == name
    for item in questionnaire.items:
        assert item.id.startswith(f"{name}."), item.id


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_skip_conditions_only_look_back_at_closed_items(name: str) -> None:
    questionnaire = load(name)
    position = {item.id: index for index, item in enumerate(questionnaire.items)}
    for index, item in enumerate(questionnaire.items):
        if item.when is not None:
            target = questionnaire.item(item.when.item)
            assert position[target.id] < index
            assert not isinstance(target, TextItem)


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_every_scale_labels_every_point(name: str) -> None:
    for item in scales(load(name)):
        assert sorted(item.labels) == list(range(item.min, item.max + 1))
        assert all(label.strip() for label in item.labels.values())


# --- IDIAL -----------------------------------------------------------------------------------


def test_idial_has_the_ten_statements_on_the_never_always_scale_scored_0_to_4() -> None:
    idial = load("idial")
    assert [item.id for item in idial.items] == [f"idial.s{n}" for n in range(1, 11)]
    assert [item.text for item in idial.items] == IDIAL_STATEMENTS
    items = scales(idial)
    assert len(items) == 10
    for item in items:
        assert (item.min, item.max, item.required) == (0, 4, True)
        assert item.labels == {
            0: "Never",
            1: "Rarely",
            2: "Sometimes",
            3: "Often",
            4: "Always",
        }
        assert item.when is None
    assert not idial.randomize


def test_idial_reverses_only_the_incoherent_statement() -> None:
    idial = load("idial")
    reversed_items = [item.id for item in scales(idial) if item.reverse]
    assert reversed_items == ["idial.s4"]
    assert "incoherent" in idial.item("idial.s4").text


def test_idial_groups_the_statements_into_the_three_evaluated_aspects() -> None:
    idial = load("idial")
    groups: dict[str | None, list[int]] = {}
    for number, item in enumerate(idial.items, start=1):
        groups.setdefault(item.construct_name, []).append(number)
    assert groups == {
        "task_completion": [1, 2],
        "effectiveness": [3, 4, 7, 10],  # "Questions 3, 4, 7 and 10 of the questionnaire"
        "user_satisfaction": [5, 6, 8, 9],
    }


# --- XRec exchange ---------------------------------------------------------------------------


def test_xrec_has_the_thirteen_questions_in_order_with_their_metrics() -> None:
    xrec = load("xrec-exchange")
    assert [item.text for item in xrec.items] == XREC_QUESTIONS
    assert [item.id for item in xrec.items] == [
        f"xrec-exchange.q{n}_{metric}" for n, metric in enumerate(XREC_METRICS, start=1)
    ]
    assert [item.construct_name for item in xrec.items] == XREC_METRICS
    assert all(item.required for item in xrec.items)


def test_xrec_question_types_and_scales() -> None:
    items = load("xrec-exchange").items
    for item in items[:3]:
        assert isinstance(item, YesNoItem)
        assert item.choices() == [(1, "Yes"), (0, "No")]
    for number, item in enumerate(items[3:], start=4):
        assert isinstance(item, ScaleItem)
        assert not item.reverse
        expected = XREC_LABELS[number]
        assert (item.min, item.max) == (1, len(expected))
        assert [item.labels[value] for value in range(1, len(expected) + 1)] == expected
    assert (items[12].min, items[12].max) == (1, 5)
    assert all(items[n].max == 3 for n in range(3, 12))


def test_xrec_asks_about_the_explanation_only_when_one_was_provided() -> None:
    items = load("xrec-exchange").items
    recommends, explains, *about_explanation = items
    assert recommends.when is None  # question 1 gates nothing
    assert explains.when is None  # the explanation rate counts every response
    assert len(about_explanation) == 11
    for item in about_explanation:
        assert item.when is not None
        assert item.when.item == explains.id
        assert item.when.holds(1) and not item.when.holds(0)


def test_xrec_last_three_questions_point_to_the_recommended_items_information() -> None:
    items = load("xrec-exchange").items
    for item in items[:10]:
        assert item.help_text() is None
    for item in items[10:]:
        help_text = item.help_text() or ""
        assert "information about the recommended movie" in help_text
        assert "the introduction, the directors, the actors, and the reviews" in help_text


# --- HRI CUES --------------------------------------------------------------------------------


def test_hri_cues_self_report_is_the_four_enjoyment_items_with_strange_reversed() -> None:
    report = load("hri-cues-self-report")
    assert [item.id for item in report.items] == [
        f"hri-cues-self-report.{key}" for key in HRI_SELF_REPORT
    ]
    assert [item.text for item in report.items] == list(HRI_SELF_REPORT.values())
    items = scales(report)
    assert len(items) == 4
    for item in items:
        assert (item.min, item.max) == (1, 5)
        assert item.construct_name == "enjoyment"
        assert item.labels[1] == "Strongly disagree" and item.labels[5] == "Strongly agree"
    assert [item.id for item in items if item.reverse] == ["hri-cues-self-report.strange"]


def hri_labels() -> dict[int, str]:
    return {level: f"{name} — {description}" for level, (name, description) in HRI_LEVELS.items()}


def test_hri_cues_rates_one_exchange_on_the_five_levels() -> None:
    cues = load("hri-cues")
    (item,) = cues.items
    assert isinstance(item, ScaleItem)
    assert item.id == "hri-cues.exchange"
    assert "exchange" in item.text
    assert (item.min, item.max, item.reverse) == (1, 5, False)
    assert item.labels == hri_labels()
    assert item.construct_name is None  # not pooled with the self-reported enjoyment
    for passage in HRI_GUIDANCE:
        assert passage in (item.help or "")


def test_hri_cues_overall_uses_the_same_levels_and_asks_for_a_rationale() -> None:
    overall = load("hri-cues-overall")
    rating, rationale = overall.items
    assert isinstance(rating, ScaleItem)
    assert rating.id == "hri-cues-overall.overall"
    assert "overall" in rating.text
    assert rating.labels == hri_labels() == scales(load("hri-cues"))[0].labels
    assert isinstance(rationale, TextItem)
    assert not rationale.required


# --- E2E NLG ---------------------------------------------------------------------------------


def test_e2e_nlg_rates_informativeness_naturalness_and_quality_on_six_points() -> None:
    e2e = load("e2e-nlg")
    assert [item.id for item in e2e.items] == [f"e2e-nlg.{name}" for name in E2E_DEFINITIONS]
    ends = {
        "informativeness": ("Not informative at all", "Very informative"),
        "naturalness": ("Very unnatural", "Very natural"),
        "quality": ("Very low quality", "Very high quality"),
    }
    for name, item in zip(E2E_DEFINITIONS, scales(e2e), strict=True):
        assert (item.min, item.max, item.required, item.reverse) == (1, 6, True, False)
        assert (item.labels[1], item.labels[6]) == ends[name]
        assert [item.labels[value] for value in range(2, 6)] == ["2", "3", "4", "5"]
        assert item.text.startswith(f"{name.capitalize()}: Is this utterance ")
        assert item.help == E2E_DEFINITIONS[name]


def test_e2e_nlg_every_criterion_shows_the_three_worked_examples() -> None:
    for item in load("e2e-nlg").items:
        assert len(item.examples) == 3
        for number, (example, (mr, utterance, answer)) in enumerate(
            zip(item.examples, E2E_EXAMPLES, strict=True), start=1
        ):
            assert example.startswith(f"Example {number}\n")
            assert f"This is a given Meaning Representation:\n{mr}\n" in example
            assert f"This is a given utterance that needs to be evaluated:\n{utterance}\n" in (
                example
            )
            assert example.endswith(f"Answer and explanation:\n{answer}")


def test_e2e_nlg_screening_admits_only_native_speakers() -> None:
    screening = load("e2e-nlg-screening")
    (item,) = screening.items
    assert isinstance(item, YesNoItem)
    assert item.text == "Are you a native speaker of British or American English?"
    assert screening.intro == E2E_NATIVE
    (condition,) = screening.eligible_if
    assert condition.item == item.id
    assert condition.holds(1) and not condition.holds(0)


# --- against the protocols themselves (their excerpts in tests/fixtures/protocols) -------------


@pytest.mark.parametrize("protocol", sorted(VERBATIM))
def test_the_copied_wording_is_in_the_protocol(protocol: str) -> None:
    text = _plain((PROTOCOLS / protocol).read_text(encoding="utf-8"))
    missing = [passage for passage in VERBATIM[protocol] if _plain(passage) not in text]
    assert missing == []
