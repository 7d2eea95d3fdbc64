"""``ozlab check --ping``: one message to every networked system, as a researcher runs it
(a process of its own) against local servers: one up, one down, one that answers garbage."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path

import pytest

from scenarios.starter import write_starter
from tests.fake_servers import FakeHttp, FakeOpenAI, FakeRasa, Mode, closed_port_url
from tests.test_llm_tools_e2e import served_model

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
DEMO_V0 = "  - type: demo\n    id: shop-v0\n    variant: v0\n"


def study_with(tmp_path: Path, systems: str) -> Path:
    write_starter(tmp_path / "pilot")
    study = tmp_path / "pilot" / "study.yaml"
    text = study.read_text(encoding="utf-8")
    assert DEMO_V0 in text
    text = re.sub(r"(?ms)^  # A language model .*?^    temperature: 0\.7\n", "", text)  # its model
    study.write_text(text.replace(DEMO_V0, systems), encoding="utf-8")
    return study


async def ozlab_check(*args: str, **env: str) -> tuple[int, list[str], str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot.cli",
        "check",
        *args,
        cwd=ROOT,
        env=dict(os.environ) | env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, out.decode().splitlines(), err.decode()


async def test_ping_tells_up_down_and_garbled_systems(tmp_path: Path) -> None:
    down = closed_port_url()
    async with FakeHttp({"text": "Hello, how can I help?"}) as up, FakeOpenAI() as llm:
        llm.behave(Mode.MALFORMED)
        study = study_with(
            tmp_path,
            f"  - {{type: http, id: mine, url: '{up.endpoint}', timeout: 5}}\n"
            f"  - {{type: rasa, id: gone, url: '{down}', timeout: 5}}\n"
            f"  - {{type: openai, id: llm, url: '{llm.url}', model: m, timeout: 5}}\n",
        )
        status, out, err = await ozlab_check(str(study), "--ping")
        [request] = up.requests
    assert '"Hello"' in json.dumps(request.json)  # the one small message
    pings = [line for line in out if line.startswith("ping ")]
    assert len(pings) == 3, out
    mine, gone, garbled = pings
    assert mine.startswith(f"ping mine (http, {up.endpoint}): up, ")
    assert " ms, the reply parses: Hello, how can I help?" in mine
    assert gone.startswith(f"ping gone (rasa, {down}): FAILED after ")
    assert "connection refused" in gone
    assert garbled.startswith(f"ping llm (openai, {llm.url}): FAILED after ")
    assert "JSON" in garbled
    assert status == 4
    assert err.strip() == (
        "ozlab: 2 of 3 systems did not answer the ping with a reply the bot can use: gone, llm"
        " (see above)"
    )


async def test_ping_passes_when_every_system_answers(tmp_path: Path) -> None:
    async with FakeRasa() as rasa:
        study = study_with(tmp_path, f"  - {{type: rasa, id: rasa, url: '{rasa.url}'}}\n")
        status, out, err = await ozlab_check(str(study), "--ping")
        assert len(rasa.requests) == 1  # one small request, nothing more
    assert status == 0, err
    assert out[0].startswith("OK: study 'pilot'")
    [ping] = [line for line in out if line.startswith("ping ")]
    assert ping.startswith(f"ping rasa (rasa, {rasa.url}): up, ")


async def test_without_networked_systems_the_ping_says_so(tmp_path: Path) -> None:
    status, out, _ = await ozlab_check("hmd", "--ping")
    assert status == 0
    assert out[-1] == "ping: no http, openai or rasa system to ping"


async def test_the_ping_offers_the_scenarios_tools_as_the_bot_does() -> None:
    """The shipped study of a language model with tools: the ping's one request offers the
    first scenario's tools, as a participant's turn would, so a server that refuses tools
    fails the check, not the first participant."""
    async with FakeOpenAI("Hello! Which game are you looking for?") as llm:
        status, out, err = await ozlab_check("hmd-llm", "--ping", OZLAB_MODEL_URL=llm.url)
        [request] = llm.requests
    assert status == 0, err
    offered = [tool["function"]["name"] for tool in request.json["tools"]]
    assert offered == ["add_to_wishlist"]
    [ping] = [line for line in out if line.startswith("ping ")]
    assert ping.startswith(f"ping shop-llm (openai, {llm.url}): up, ")
    assert ping.endswith("(offered 1 tool: add_to_wishlist)")


def with_judge(study: Path, url: str) -> None:
    """The study decides task success with a model judge that needs a key."""
    text = study.read_text(encoding="utf-8")
    judge = f"success_judge: {{id: grader, url: '{url}', model: m, api_key_env: GRADER_KEY}}\n"
    study.write_text(text + judge, encoding="utf-8")


async def test_the_ping_asks_every_judge_one_question_as_a_run_would(tmp_path: Path) -> None:
    """A judge is asked one yes/no question with the study's model, temperature and key (the
    key from the environment); its answer parses: up. Nothing of the study is sent."""
    async with FakeRasa() as rasa, FakeOpenAI("Yes", api_key="k-123") as grader:
        study = study_with(tmp_path, f"  - {{type: rasa, id: rasa, url: '{rasa.url}'}}\n")
        with_judge(study, grader.url)
        status, out, err = await ozlab_check(str(study), "--ping", GRADER_KEY="k-123")
        [request] = grader.requests
    assert status == 0, err
    assert request.json["model"] == "m" and request.json["temperature"] == 0.0
    assert request.json["messages"][-1]["content"].endswith("Answer with one of: yes, no")
    pings = [line for line in out if line.startswith("ping ")]
    assert pings[0].startswith(f"ping rasa (rasa, {rasa.url}): up, ")
    assert pings[1].startswith(f"ping grader (judge, {grader.url}/v1/chat/completions): up, ")
    assert pings[1].endswith("the reply parses: Yes")
    assert "k-123" not in "\n".join(out) + err


async def test_a_judge_refused_or_answering_off_the_values_fails_the_check(
    tmp_path: Path,
) -> None:
    """A wrong key and a judge that talks instead of answering each fail the check (status
    4), named in its one line; the key is never printed."""
    async with FakeRasa() as rasa, FakeOpenAI("Sure! I think so.") as talker:
        study = study_with(tmp_path, f"  - {{type: rasa, id: rasa, url: '{rasa.url}'}}\n")
        with_judge(study, talker.url)
        status, out, err = await ozlab_check(str(study), "--ping", GRADER_KEY="k-123")
    assert status == 4
    [line] = [line for line in out if line.startswith("ping grader ")]
    assert "FAILED after " in line
    assert line.endswith("answered 'Sure! I think so.', not one of the values yes, no")
    assert err.strip() == (
        "ozlab: 1 of 1 judges did not answer with one of the values they were offered: grader"
        " (see above)"
    )
    async with FakeRasa() as rasa, FakeOpenAI("yes", api_key="right") as grader:
        study = study_with(tmp_path / "keyed", f"  - {{type: rasa, id: rasa, url: '{rasa.url}'}}\n")
        with_judge(study, grader.url)
        status, out, err = await ozlab_check(str(study), "--ping", GRADER_KEY="wrong-key")
    assert status == 4
    [line] = [line for line in out if line.startswith("ping grader ")]
    assert "FAILED after " in line and "401" in line, line
    assert "wrong-key" not in "\n".join(out) + err


async def test_the_judges_of_the_studys_annotation_jobs_are_asked_where_url_env_says() -> None:
    """The shipped HRI CUES study names a job whose judge is served where OZLAB_JUDGE_URL
    says: that server gets the one question."""
    async with FakeOpenAI("no") as judge:
        status, out, err = await ozlab_check("hri-cues", "--ping", OZLAB_JUDGE_URL=judge.url)
        [request] = judge.requests
    assert status == 0, err
    assert request.json["model"] == "ozlab-demo-shop-v1"
    [line] = [line for line in out if line.startswith("ping gpt-judge ")]
    assert line.startswith(f"ping gpt-judge (judge, {judge.url}/v1/chat/completions): up, ")


async def test_the_demo_judge_of_serve_demo_answers_the_ping_as_a_run_would() -> None:
    """The shipped HRI CUES job's judge, played by ``ozlab serve-demo --openai`` as the
    guide says: it answers the ping's question with one of its values, as it answers a
    run's, so the check passes."""
    server, url = served_model()
    try:
        status, out, err = await ozlab_check("hri-cues", "--ping", OZLAB_JUDGE_URL=url)
    finally:
        server.kill()
        server.wait()
        assert server.stdout is not None
        server.stdout.close()
    [line] = [line for line in out if line.startswith("ping gpt-judge ")]
    assert line.startswith(f"ping gpt-judge (judge, {url}/v1/chat/completions): up, "), line
    assert re.search(r"the reply parses: (yes|no)$", line), line
    assert status == 0, err
