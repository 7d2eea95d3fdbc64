"""Judges in a job file: a language model named beside the annotators, checked with file,
line and field like the rest of the job."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from bot.core.errors import SystemSetupError
from bot.systems.openai import served_at
from scenarios.jobs import Judge
from scenarios.loading import StudyError, load_study

STUDY = """\
id: mini
title: Mini
texts: {welcome: Hi, consent: Agree, declined: Bye}
systems:
  - {type: demo, id: shop-v1, variant: v1}
scenarios: [xrec-recommend]
annotation_jobs: [rate]
"""

JOB = """\
id: rate
title: Rate the replies
rate:
  exchange: [xrec-exchange]
annotators: 2
brief:
  guidelines: Read the whole conversation first.
judges:
  - id: gpt-judge
    url: http://127.0.0.1:8000
    model: judge-model
    api_key_env: JUDGE_KEY
    temperature: 0
    seed: 7
    prompt: You rate conversations with a shop assistant.
"""


def study_with(tmp_path: Path, job: str) -> Path:
    (tmp_path / "jobs").mkdir(exist_ok=True)
    (tmp_path / "jobs" / "rate.yaml").write_text(textwrap.dedent(job))
    study = tmp_path / "study.yaml"
    study.write_text(STUDY)
    return study


def test_a_job_names_its_judges_beside_its_annotators(tmp_path: Path) -> None:
    job = load_study(study_with(tmp_path, JOB)).jobs["rate"]
    [judge] = job.judges
    assert (judge.id, judge.model, judge.api_key_env, judge.temperature, judge.seed) == (
        "gpt-judge",
        "judge-model",
        "JUDGE_KEY",
        0.0,
        7,
    )
    assert judge.url == "http://127.0.0.1:8000"
    assert job.annotators == 2


@pytest.mark.parametrize(
    ("change", "line", "field", "words"),
    [
        (("url: http://127.0.0.1:8000", "url: ftp://x"), 10, "judges[0].url",
         "is not an http:// or https:// address"),
        (("api_key_env: JUDGE_KEY", "api_key_env: sk-123"), 12, "judges[0].api_key_env",
         "not an environment variable name"),
        (("temperature: 0", "temperature: 3"), 13, "judges[0].temperature", "less than or equal"),
        (("    seed: 7\n", "    seed: 7\n    sed: 1\n"), 15, "judges[0].sed",
         "unknown field 'sed'"),
        (("    model: judge-model\n", ""), 9, "judges[0].model", "Field required"),
        (("judges:\n", "judges:\n  - {id: gpt-judge, url: 'http://h', model: m}\n"), 8,
         "judges", "each judge needs its own id"),
    ],
)  # fmt: skip
def test_a_broken_judge_is_told_with_file_line_and_field(
    tmp_path: Path, change: tuple[str, str], line: int, field: str, words: str
) -> None:
    assert change[0] in JOB
    study = study_with(tmp_path, JOB.replace(*change))
    with pytest.raises(StudyError) as caught:
        load_study(study)
    found = [str(p) for p in caught.value.problems]
    prefix = f"{tmp_path / 'jobs' / 'rate.yaml'}:{line}: {field}: "
    assert [p for p in found if p.startswith(prefix) and words in p], found


def test_a_judge_s_url_env_says_where_its_server_is() -> None:
    """The job file keeps a local default; the environment's variable, when set, wins, and
    a value that is no address stops the run on the judge's url_env."""
    judge = Judge(id="j", url="http://127.0.0.1:8081", url_env="OZLAB_JUDGE_URL", model="m")
    where = (judge.url, judge.url_env)
    assert served_at(*where, {}, "judge 'j'") == "http://127.0.0.1:8081"
    assert served_at(*where, {"OZLAB_JUDGE_URL": " "}, "judge 'j'") == "http://127.0.0.1:8081"
    assert served_at(*where, {"OZLAB_JUDGE_URL": "http://gpu:8000"}, "j") == "http://gpu:8000"
    with pytest.raises(SystemSetupError, match="judge 'j': the environment's OZLAB_JUDGE_URL"):
        served_at(*where, {"OZLAB_JUDGE_URL": "gpu-box"}, "judge 'j'")
    with pytest.raises(ValueError, match="url_env"):
        Judge(id="j", url="http://h", url_env="sk-123", model="m")
