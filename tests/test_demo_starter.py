"""The starter study (``ozlab new``) played by simulated participants, as its README says:
its language model served here, every participant played through the real bot."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.pilot.demo import play_study
from bot.pilot.simulation.play import Played
from bot.systems.served_model import model_app
from scenarios.loading import load_study
from scenarios.starter import write_starter
from tests.fake_servers import serving
from tests.store_reads import tables

pytestmark = pytest.mark.slow


def _play(folder: Path, monkeypatch: pytest.MonkeyPatch, participants: int) -> list[Played]:
    write_starter(folder / "my-study")
    bundle = load_study(folder / "my-study" / "study.yaml")

    async def play() -> list[Played]:
        async with serving(model_app("v1")) as url:
            monkeypatch.setenv("OZLAB_MODEL_URL", url)
            return await play_study(bundle, folder / "demo.sqlite", participants=participants)

    return asyncio.run(play())


def test_the_starter_is_played_without_waiting_out_a_rating_that_never_comes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The starter rates every reply but the one that ends the task: a simulated participant
    knows the task is over (from the store) instead of waiting for a rating until a time
    limit on the wall clock gives up."""
    played = _play(tmp_path, monkeypatch, participants=3)
    assert sum(p.exchanges for p in played) > 0
    assert any(g.rating for p in played for g in p.given)  # the replies were rated
    assert [p.waited_out for p in played] == [0, 0, 0]


def test_the_starters_simulated_participants_pass_its_attention_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its simulation states no attention_fail_rate: every simulated participant reads."""
    _play(tmp_path, monkeypatch, participants=4)
    checks = [
        r["value"]
        for r in tables(tmp_path / "demo.sqlite")["responses"]
        if r["item_id"] == "my-questionnaire.attention"
    ]
    assert len(checks) >= 3 and set(checks) == {2}
