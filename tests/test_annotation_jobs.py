"""Annotation job files: loaded with the study that names them, every mistake told with
file, line and field (``ozlab check``); the shipped jobs say what their protocols say."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from bot.annotation.information import informed
from bot.core.annotation import AnnotationTarget, AnnotationTask, TranscriptExchange
from bot.core.privacy import Privacy
from bot.core.vocabulary import AnnotationLevel, AnnotationRound
from bot.engine.annotating.information import NOTHING_FOUND, information_for, information_text
from scenarios.loading import StudyError, load_study
from scenarios.models import StudyBundle

STUDY = """\
id: mini
title: Mini
texts: {welcome: Hi, consent: Agree, declined: Bye}
systems:
  - {type: demo, id: shop-v1, variant: v1}
scenarios: [xrec-recommend]
annotation_jobs: [%s]
"""

GOOD_JOB = """\
id: rate
title: Rate the replies
sessions: {systems: [shop-v1], sample: {n: 5, seed: 3}}
rate:
  exchange: [xrec-exchange]
annotators: 2
adjudication:
  third_annotator_when: {choice_differs: true, scale_differs_by_more_than: 1}
extra_information:
  - items: [xrec-exchange.q11_representativeness]
    from: demo_catalogue
    heading: About the games
brief:
  guidelines: Read the whole conversation first.
  examples:
    - {exchange: "I found 2 games", rating: "Q1 Yes", why: "It recommends."}
"""


def study_with(tmp_path: Path, job: str, ref: str = "rate", name: str = "rate.yaml") -> Path:
    (tmp_path / "jobs").mkdir(exist_ok=True)
    (tmp_path / "jobs" / name).write_text(textwrap.dedent(job))
    study = tmp_path / "study.yaml"
    study.write_text(STUDY % ref)
    return study


def problems(study: Path) -> list[str]:
    with pytest.raises(StudyError) as caught:
        load_study(study)
    return [str(p) for p in caught.value.problems]


def test_a_study_loads_the_jobs_it_names_and_their_instruments(tmp_path: Path) -> None:
    bundle = load_study(study_with(tmp_path, GOOD_JOB))
    job = bundle.jobs["rate"]
    assert job.sessions.sample is not None and job.sessions.sample.n == 5
    assert job.adjudication is not None
    assert job.adjudication.third_annotator_when.scale_differs_by_more_than == 1
    assert job.extra_information[0].source == "demo_catalogue"
    assert "xrec-exchange" in bundle.questionnaires
    # the study as the bot stores it keeps its jobs
    again = StudyBundle.model_validate_json(bundle.model_dump_json())
    assert again.jobs == bundle.jobs


def test_a_job_named_by_path_is_found_beside_the_study(tmp_path: Path) -> None:
    study = study_with(tmp_path, GOOD_JOB, ref="jobs/other.yaml", name="other.yaml")
    (tmp_path / "jobs" / "other.yaml").write_text(GOOD_JOB)
    assert list(load_study(study).jobs) == ["rate"]


@pytest.mark.parametrize(
    ("change", "line", "field", "words"),
    [
        (("rate:\n  exchange: [xrec-exchange]", "rate:\n  exchange: [nope]"), 5, "rate.exchange[0]",
         "no questionnaire 'nope'"),
        (("[xrec-exchange.q11_representativeness]", "[xrec-exchange.q99]"), 10,
         "extra_information[0].items[0]", "no item 'xrec-exchange.q99' in the job's instruments"),
        (("annotators: 2", "annotators: 0"), 6, "annotators", "greater than or equal to 1"),
        (("annotators: 2", "annotator: 2"), 6, "annotator", "unknown field 'annotator'"),
        (("systems: [shop-v1]", "systems: [shop-v9]"), 3, "sessions.systems[0]",
         "the study runs no system 'shop-v9'"),
        (("from: demo_catalogue", "from: a_database"), 11, "extra_information[0].from",
         "'demo_catalogue'"),
        (("{choice_differs: true, scale_differs_by_more_than: 1}", "{}"), 8,
         "adjudication.third_annotator_when", "say when annotators disagree"),
        (("rate:\n  exchange: [xrec-exchange]", "rate: {}"), 4, "rate",
         "at least one level"),
        (("  guidelines: Read the whole conversation first.\n", ""), 13, "brief.guidelines",
         "Field required"),
    ],
)  # fmt: skip
def test_a_broken_job_is_told_with_file_line_and_field(
    tmp_path: Path, change: tuple[str, str], line: int, field: str, words: str
) -> None:
    assert change[0] in GOOD_JOB
    study = study_with(tmp_path, GOOD_JOB.replace(*change))
    prefix = f"{tmp_path / 'jobs' / 'rate.yaml'}:{line}: {field}: "
    found = problems(study)
    [problem] = [p for p in found if p.startswith(prefix)] or found
    assert words in problem


def test_an_unknown_job_is_told_at_the_study_line(tmp_path: Path) -> None:
    study = study_with(tmp_path, GOOD_JOB, ref="missing")
    [problem] = problems(study)
    assert problem.startswith(f"{study}:7: annotation_jobs[0]: no annotation job 'missing'")


def test_a_job_whose_id_is_not_its_file_name_is_told(tmp_path: Path) -> None:
    study = study_with(tmp_path, GOOD_JOB.replace("id: rate", "id: other"))
    [problem] = problems(study)
    assert ":1: id: id 'other' does not match 'rate'" in problem


def test_the_shipped_jobs_follow_their_protocols() -> None:
    cues = load_study("hri-cues").jobs["hri-cues"]
    assert (cues.annotators, cues.seen_once_in_order, cues.adjudication) == (3, True, None)
    assert cues.with_next_message and not load_study("xrec").jobs["xrec"].with_next_message
    assert (cues.rate.exchange, cues.rate.session) == (("hri-cues",), ("hri-cues-overall",))
    assert "Use the full scale" in cues.brief.guidelines and len(cues.brief.examples) == 3
    xrec_bundle = load_study("xrec")
    xrec = xrec_bundle.jobs["xrec"]
    assert (xrec.annotators, xrec.seen_once_in_order, xrec.rate.exchange) == (
        2,
        False,
        ("xrec-exchange",),
    )
    assert xrec.adjudication is not None
    rule = xrec.adjudication.third_annotator_when
    assert (rule.choice_differs, rule.scale_differs_by_more_than) == (True, 0)
    [extra] = xrec.extra_information
    items = [item.id for item in xrec_bundle.questionnaire("xrec-exchange").items]
    assert extra.items == tuple(items[10:13])  # questions 11 to 13
    assert extra.source == "demo_catalogue"


def test_an_annotators_chat_is_a_keyed_hash_unlinkable_to_a_participant() -> None:
    privacy = Privacy("a secret of at least sixteen characters")
    other = Privacy("another secret of sixteen characters")
    chat = privacy.annotator_chat(4242)
    assert chat == privacy.annotator_chat(4242) != privacy.annotator_chat(4243)
    assert chat != other.annotator_chat(4242)
    assert "4242" not in chat and privacy.pseudonym(4242)[1:] not in chat


def rated(exchange: TranscriptExchange) -> AnnotationTask:
    """A target whose rated exchange is ``exchange``, with what its reply recommends."""
    target = AnnotationTarget("xrec", "s1:1", AnnotationLevel.EXCHANGE, 0, "s1", 1, "demo", "shop")
    task = AnnotationTask(target, AnnotationRound.FIRST, (exchange,), {}, 1, 1, 1, 1)
    found = informed(task)
    assert found is not None
    return found


def test_xrec_questions_11_to_13_show_the_recommended_games_entries() -> None:
    job = load_study("xrec").jobs["xrec"]
    [extra] = job.extra_information
    assert information_for(job, "xrec-exchange.q11_representativeness") == extra
    assert information_for(job, "xrec-exchange.q12_effectiveness") is None  # shown once
    assert information_for(job, "xrec-exchange.q1_recommendation_rate") is None
    reply = "I found 2 adventure games for Linux:\n1. lantern road\n2. Moss Hollow\nMore?"
    said = information_text(
        extra, rated(TranscriptExchange(1, 1, "adventure on linux?", 1.0, 1, reply))
    )
    assert said.startswith(extra.heading)
    assert said.index("Lantern Road (2020)") < said.index("Moss Hollow (2019)")
    assert "Platforms: Windows, Mac, Linux, Switch. Price: €17.99." in said
    nothing = information_text(
        extra, rated(TranscriptExchange(1, 1, "hi", 1.0, 1, "What do you like?"))
    )
    assert nothing.endswith(NOTHING_FOUND)
