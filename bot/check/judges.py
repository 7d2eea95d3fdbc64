"""``ozlab check --ping`` for model judges: one short question to every judge the study names
(its ``success_judge`` and the judges of its annotation jobs) before a run pays for
thousands. A judge whose server is down, whose key is refused or whose model is not served
fails here; one that answers with anything but one of the values it is offered would have
every rating of a run come back unparseable. The call is made as ``ozlab judge run`` makes
its calls (the same body, address, key and timeout; one attempt; the question in the form a
run asks, its values on the line that ends it) and kept nowhere.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from bot.engine.annotating.judging import (
    JudgedItem,
    answer_text,
    choices_of,
    parse,
    question,
    request,
)
from bot.systems.base import SystemFailure, SystemTimeout
from bot.systems.http_json import JsonClient, bearer_header, describe_url, excerpt
from bot.systems.openai import completions_url, served_at
from bot.systems.ping import Ping
from questionnaires.models import YesNoItem
from scenarios.jobs import Judge
from scenarios.models import StudyBundle

_ITEM = YesNoItem(type="yes_no", id="ping", text="Is this a test?")
_ASKED = JudgedItem("ping", _ITEM, choices_of(_ITEM))
_SYSTEM = "You check answers for a study. Answer with exactly one of the values you are given."
_QUESTION = question(_ASKED, ("(a check of the judge: no conversation of the study)", ""))


def study_judges(bundle: StudyBundle) -> list[Judge]:
    """Every judge the study names, once each (by id): the success judge, then the jobs'."""
    found: dict[str, Judge] = {}
    if bundle.study.success_judge is not None:
        found[bundle.study.success_judge.id] = bundle.study.success_judge
    for job in bundle.jobs.values():
        for judge in job.judges:
            found.setdefault(judge.id, judge)
    return list(found.values())


async def ping_judges(bundle: StudyBundle, env: Mapping[str, str]) -> list[Ping]:
    """Ask every judge of the study the one question, one after the other."""
    judges = study_judges(bundle)
    if not judges:
        return []
    client = JsonClient()
    try:
        return [await _ping(judge, client, env) for judge in judges]
    finally:
        await client.close()


async def _ping(judge: Judge, client: JsonClient, env: Mapping[str, str]) -> Ping:
    endpoint = completions_url(served_at(judge.url, judge.url_env, env, f"judge {judge.id!r}"))
    address = describe_url(endpoint)
    headers = bearer_header(judge.id, judge.api_key_env, env)
    started = time.perf_counter()
    try:
        answer = await client.post(
            endpoint, request(judge, _SYSTEM, _QUESTION), timeout=judge.timeout, headers=headers
        )
    except SystemFailure as failure:
        took = time.perf_counter() - started
        timed_out = isinstance(failure, SystemTimeout)
        return Ping(judge.id, "judge", address, took, None, str(failure), timed_out)
    took = time.perf_counter() - started
    said = answer_text(answer)
    if parse(said, _ASKED.choices) is None:
        problem = f"answered '{excerpt(said, 60)}', not one of the values yes, no"
        return Ping(judge.id, "judge", address, took, None, problem)
    return Ping(judge.id, "judge", address, took, said.strip())
