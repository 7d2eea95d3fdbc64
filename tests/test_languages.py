"""Languages: the bot's default sentences per language, questionnaires' translations, the
questionnaire frame and its progress counter, and what ``ozlab check`` says is missing."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from bot.check.study import missing_translations
from bot.cli import main
from bot.core.vocabulary import Moment
from bot.engine import asking
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.callbacks import Channel, SurveyTap, TapAction, encode
from bot.engine.common import CONSENT_YES
from bot.engine.flow import Step, step
from bot.engine.journey import Journey, Stage
from questionnaires.models import Questionnaire
from scenarios.loading import load_study
from scenarios.models import Scenario, Study, StudyBundle, Texts
from scenarios.sentences import SOURCE, catalogue, languages

LABELS = {1: "Low", 2: "Mid", 3: "High"}


def _placeholders(sentence: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(sentence) if name is not None}


# --- the bot's default sentences, one file per language ---------------------------------


def test_ozlab_ships_english_and_italian() -> None:
    assert languages()[0] == SOURCE == "en"
    assert "it" in languages()


@pytest.mark.parametrize("language", languages())
def test_every_language_has_every_sentence_with_the_same_placeholders(language: str) -> None:
    english, other = catalogue(SOURCE), catalogue(language)
    assert sorted(other) == sorted(english), "the same keys as en.yaml"
    for key, sentence in english.items():
        assert other[key].strip(), key
        assert _placeholders(other[key]) == _placeholders(sentence), key


@pytest.mark.parametrize("language", languages())
def test_every_language_reads_as_the_python_yaml_loader_reads_it(language: str) -> None:
    """libyaml's loader (quicker) reads each file sentence for sentence as PyYAML's own."""
    text = (Path(__file__).parent.parent / "scenarios" / "texts" / f"{language}.yaml").read_text(
        encoding="utf-8"
    )
    assert dict(catalogue(language)) == yaml.safe_load(text)


def test_every_default_sentence_of_texts_comes_from_the_english_file() -> None:
    english = catalogue(SOURCE)
    defaults = {
        name: field.default
        for name, field in Texts.model_fields.items()
        if not field.is_required() and field.default is not None  # None: the study writes it
    }
    assert sorted(defaults) == sorted(english), "every default of Texts is a key of en.yaml"
    assert all(defaults[key] == english[key] for key in english)


def _study(**changes: object) -> Study:
    study = Study(
        id="s",
        title="S",
        texts=Texts(welcome="Hello", consent="Agree?", declined="Bye", thanks="Cheers!"),
        systems=({"type": "demo", "id": "sys"},),
        scenarios=("task",),
    )
    return study.model_copy(update=changes)


def test_a_study_in_italian_gets_the_italian_defaults_and_keeps_its_own_words() -> None:
    study = Study.model_validate(
        {
            **_study().model_dump(exclude={"texts"}),
            "language": "it",
            "texts": {"welcome": "Ciao", "consent": "Accetti?", "declined": "Ciao ciao"},
        }
    )
    texts = study.texts_for(None)
    assert texts.finish_button == catalogue("it")["finish_button"] == "Termina il compito"
    assert texts.welcome == "Ciao"


def test_translations_and_the_studys_own_words_win_over_the_defaults() -> None:
    study = _study(translations={"it": {"welcome": "Ciao", "skip_button": "Passa"}})
    texts = study.texts_for("it-IT")
    assert texts.welcome == "Ciao" and texts.skip_button == "Passa"
    assert texts.done_button == "Fatto"  # the Italian default
    assert texts.thanks == "Cheers!"  # the study wrote it and did not translate it
    assert study.texts_for("en").done_button == "Done"


# --- a participant's language: only where the study is offered in it ----------------------


def _bundle(
    study: Study, *questionnaires: Questionnaire, post_task: tuple[str, ...] = ()
) -> StudyBundle:
    scenario = Scenario(id="task", title="A task", brief="Do it.", post_task=post_task)
    return StudyBundle(
        study=study,
        scenarios={"task": scenario},
        questionnaires={q.id: q for q in questionnaires},
    )


def test_a_study_not_offered_in_a_language_stays_whole_in_its_own() -> None:
    english_only = _bundle(_study())
    assert english_only.languages() == ("en",)
    assert english_only.texts_for("it").finish_button == "Finish task"
    declared = _bundle(_study(languages=("it",)))
    assert declared.texts_for("it").finish_button == "Termina il compito"


# --- questionnaires in other languages -----------------------------------------------------

TRANSLATED = {
    "id": "q",
    "title": "Rating",
    "intro": "About the task.",
    "items": [
        {
            "type": "scale",
            "id": "q.a",
            "text": "Easy?",
            "max": 3,
            "labels": LABELS,
            "help": "1 is hard.",
        },
        {"type": "yes_no", "id": "q.b", "text": "Again?"},
        {
            "type": "choice",
            "id": "q.c",
            "text": "Which?",
            "options": [{"value": 1, "label": "One"}, {"value": "two", "label": "Two"}],
        },
    ],
    "translations": {
        "it": {
            "title": "Valutazione",
            "items": {
                "q.a": {"text": "Facile?", "labels": {1: "Basso", 2: "Medio", 3: "Alto"}},
                "q.b": {"text": "Di nuovo?", "yes": "Sì", "no": "No"},
                "q.c": {"text": "Quale?", "options": {1: "Uno"}},
            },
        }
    },
}


def test_a_questionnaire_in_another_language_keeps_its_ids_values_and_scoring() -> None:
    questionnaire = Questionnaire.model_validate(TRANSLATED)
    italian = questionnaire.in_language("it")
    assert italian.title == "Valutazione" and italian.intro == "About the task."
    scale, yes_no, choice = italian.items
    assert scale.text == "Facile?" and scale.choices() == [(1, "Basso"), (2, "Medio"), (3, "Alto")]
    assert scale.help == "1 is hard."  # not translated: as written
    assert yes_no.choices() == [(1, "Sì"), (0, "No")]
    assert choice.choices() == [(1, "Uno"), ("two", "Two")]
    assert [i.id for i in italian.items] == [i.id for i in questionnaire.items]
    assert questionnaire.in_language("it") is italian  # made once
    assert questionnaire.in_language("de") is questionnaire


def test_translated_words_must_belong_to_the_questionnaire() -> None:
    broken = {
        **TRANSLATED,
        "translations": {
            "it": {
                "items": {
                    "q.a": {"labels": {4: "Oltre"}, "yes": "Sì"},
                    "q.z": {"text": "Chi?"},
                    "q.c": {"options": {"three": "Tre"}},
                }
            }
        },
    }
    with pytest.raises(ValidationError) as raised:
        Questionnaire.model_validate(broken)
    places = {(e["loc"], e["msg"]) for e in raised.value.errors()}
    assert places == {
        (("translations", "it", "items", "q.a", "labels", 4), "'q.a' has no scale point 4"),
        (("translations", "it", "items", "q.a", "yes"), "'q.a' is not a yes_no item"),
        (("translations", "it", "items", "q.z"), "no item 'q.z' here"),
        (("translations", "it", "items", "q.c", "options", "three"), "'q.c' has no option 'three'"),
    }


def test_what_a_questionnaire_still_lacks_in_a_language() -> None:
    questionnaire = Questionnaire.model_validate(TRANSLATED)
    assert questionnaire.missing_in("en") == []
    assert questionnaire.missing_in("it") == ["intro", "q.a help", "q.c options"]
    assert questionnaire.missing_in("de")[:4] == ["title", "intro", "q.a text", "q.a help"]


# --- the questionnaire frame ---------------------------------------------------------------


def _scale(item_id: str, text: str) -> dict[str, object]:
    return {"type": "scale", "id": item_id, "text": text, "min": 1, "max": 3, "labels": LABELS}


AFTER_TASK = Questionnaire.model_validate(
    {
        "id": "task_q",
        "title": "The task",
        "items": [_scale("t.a", "Task A?"), _scale("t.b", "Task B?")],
    }
)
MORE = Questionnaire.model_validate(
    {"id": "more", "title": "More", "intro": "Three more.", "items": [_scale("m.a", "More A?")]}
)
AFTER_STUDY = Questionnaire.model_validate(
    {
        "id": "study_q",
        "title": "The study",
        "intro": "About the whole study.",
        "items": [_scale("s.a", "Study A?"), _scale("s.b", "Study B?")],
    }
)


def _run(bundle: StudyBundle, journey: Journey | None, event: ev.Event) -> Step:
    return step(bundle, "p1", journey, event, 0.0)


def _sent(result: Step) -> list[str]:
    return [e.text for e in result.effects if isinstance(e, fx.Send)]


def _tap_first(bundle: StudyBundle, journey: Journey) -> Step:
    tap = SurveyTap(Channel.FRONT, TapAction.ANSWER, journey.asked, 0)
    return _run(bundle, journey, ev.ButtonTapped(encode(tap)))


def _after_task(bundle: StudyBundle) -> Step:
    journey = _run(bundle, None, ev.StartCommand()).journey
    journey = _run(bundle, journey, ev.ButtonTapped(CONSENT_YES)).journey
    assert journey is not None and journey.stage is Stage.DIALOGUE
    return _run(bundle, journey, ev.DoneCommand())


def test_after_a_task_the_frame_speaks_of_the_conversation_and_after_the_study_of_its_end() -> None:
    bundle = _bundle(
        _study(post_study=("study_q",)), AFTER_TASK, AFTER_STUDY, post_task=("task_q",)
    )
    texts = bundle.texts_for(None)
    ended = _after_task(bundle)
    assert texts.questionnaire_intro in _sent(ended)
    assert not any(texts.post_study_intro in s for s in _sent(ended))
    first = _tap_first(bundle, ended.journey)
    last = _tap_first(bundle, first.journey)
    said = _sent(last)
    assert f"{texts.post_study_intro}\n\nAbout the whole study." in said
    assert not any(texts.questionnaire_intro in s for s in said)
    assert last.journey.survey.moment is Moment.POST_STUDY


def test_a_second_questionnaire_is_introduced_in_a_new_message_after_the_first_is_ticked() -> None:
    bundle = _bundle(_study(), AFTER_TASK, MORE, post_task=("task_q", "more"))
    ended = _after_task(bundle)
    assert ended.effects[-2] == fx.Send(bundle.texts_for(None).questionnaire_intro)
    first = _tap_first(bundle, ended.journey)
    first = _run(bundle, first.journey, ev.MessageSent(41))  # where the items are shown
    second = _tap_first(bundle, first.journey)
    edits = [e for e in second.effects if isinstance(e, fx.Edit)]
    assert edits == [fx.Edit(41, "The task ✓")]
    said = _sent(second)
    assert said[0] == "Three more." and said[1].startswith("More\n\nMore A?")


def test_an_italian_participant_gets_the_frame_in_italian() -> None:
    bundle = _bundle(_study(post_study=("study_q",), languages=("it",)), AFTER_STUDY)
    journey = _run(bundle, None, ev.StartCommand(language="it")).journey
    journey = _run(bundle, journey, ev.ButtonTapped(CONSENT_YES)).journey
    done = _run(bundle, journey, ev.DoneCommand())
    assert catalogue("it")["post_study_intro"] + "\n\nAbout the whole study." in _sent(done)


# --- the progress counter -----------------------------------------------------------------

SKIPPING = Questionnaire.model_validate(
    {
        "id": "skip",
        "title": "Skip",
        "items": [
            _scale("k.a", "A?"),
            {"type": "yes_no", "id": "k.gate", "text": "Problems?"},
            {
                "type": "text",
                "id": "k.which",
                "text": "Which?",
                "when": {"item": "k.gate", "equals": 1},
            },
            _scale("k.end", "Overall?"),
            {"type": "text", "id": "k.comment", "text": "Anything else?"},
        ],
    }
)


def _counters(answers: list[asking.Answer], moment: Moment = Moment.POST_TASK) -> list[str]:
    """The counter of every item shown, answering each with the next of ``answers``."""
    bundle = _bundle(_study(), SKIPPING)
    started = asking.start(
        bundle, moment=moment, questionnaires=("skip",), session_id="s", seed="x", asked=1, now=0
    )
    survey, seen = started.survey, []
    for value in answers:
        assert survey is not None
        seen.append(asking.progress(SKIPPING, survey))
        survey = asking.answer(bundle, survey, 0, value=value).survey
    assert survey is None, "every item answered"
    return seen


def test_the_counter_counts_free_text_so_the_last_item_is_n_of_n() -> None:
    assert _counters([2, 1, "this", 3, "fine"]) == ["1/5", "2/5", "3/5", "4/5", "5/5"]


def test_the_counter_shrinks_when_an_answer_skips_items() -> None:
    assert _counters([2, 0, 3, "fine"]) == ["1/5", "2/5", "3/4", "4/4"]


def test_beside_the_chat_free_text_is_never_asked_nor_counted() -> None:
    assert _counters([2, 0, 3], Moment.EXCHANGE) == ["1/3", "2/3", "3/3"]


def test_the_hmd_counter_ends_at_its_comment() -> None:
    hmd = load_study("hmd")
    started = asking.start(
        hmd,
        moment=Moment.POST_TASK,
        questionnaires=("hmd",),
        session_id="s",
        seed="x",
        asked=1,
        now=0,
    )
    survey = started.survey
    for _ in range(4):
        survey = asking.answer(hmd, survey, 0, value=3).survey
    assert asking.progress(hmd.questionnaire("hmd"), survey) == "5/5"
    assert isinstance(asking.current_item(hmd, survey), type(hmd.questionnaire("hmd").items[-1]))


# --- ozlab check: what is missing in each language ------------------------------------------

PARTLY = """\
id: partly
title: Partly translated
language: en
languages: [de]
texts:
  welcome: Hello
  consent: Do you agree?
  declined: Bye
translations:
  it:
    welcome: Ciao
systems:
  - {type: demo, id: a, variant: v1}
scenarios: [task]
post_study: [idial]
"""
TASK = """\
id: task
title: A task
brief: Do it.
translations:
  it: {title: Un compito}
"""


def test_check_lists_what_is_missing_per_language(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "task.yaml").write_text(TASK, encoding="utf-8")
    (tmp_path / "partly.yaml").write_text(PARTLY, encoding="utf-8")
    assert main(["check", str(tmp_path / "partly.yaml")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "  languages: en, de, it" in out
    missing = {line.split(":")[0].strip(): line for line in out if "missing in" in line}
    assert sorted(missing) == ["missing in de", "missing in it"]
    assert missing["missing in it"].endswith("texts: consent, declined; scenario task: brief")
    assert "questionnaire idial" not in missing["missing in it"]  # IDIAL ships its Italian
    assert "texts: welcome, consent, declined" in missing["missing in de"]
    assert "add scenarios/texts/de.yaml, or translations.de" in missing["missing in de"]
    assert "scenario task: title, brief" in missing["missing in de"]
    assert (
        "questionnaire idial: title, intro, idial.s1 text, idial.s1 labels"
        in missing["missing in de"]
    )


def test_the_shipped_idial_study_is_wholly_italian() -> None:
    idial = load_study("idial")
    assert idial.languages() == ("en", "it")
    assert missing_translations(idial) == {"it": []}


def test_a_copy_of_a_study_does_not_reuse_the_originals_texts() -> None:
    original = _study(translations={"it": {"welcome": "Ciao"}})
    assert original.texts_for("it").welcome == "Ciao"
    copy = original.model_copy(update={"translations": {"it": {"welcome": "Salve"}}})
    assert copy.texts_for("it").welcome == "Salve"
    assert original.texts_for("it").welcome == "Ciao"


def test_unquoted_yes_and_no_keys_in_yaml_still_name_the_buttons() -> None:
    words = yaml.safe_load("items:\n  q.b: {text: Ancora, yes: Sì, no: Per niente}\n")
    data = {**TRANSLATED, "translations": {"it": words}}
    yes_no = Questionnaire.model_validate(data).in_language("it").items[1]
    assert yes_no.choices() == [(1, "Sì"), (0, "Per niente")]
