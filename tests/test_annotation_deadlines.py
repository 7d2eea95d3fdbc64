"""When the bot plans an annotation job on its clock: at once at the first tick, just after
the next drop-out, sooner when it gave work itself, and never later than ``RECHECK``."""

from __future__ import annotations

from bot.annotation.deadlines import RECHECK, DropOutWatch
from scenarios.jobs import AnnotationJob


def job(job_id: str, drop_out_after: float | None) -> AnnotationJob:
    return AnnotationJob.model_validate(
        {
            "id": job_id,
            "title": job_id,
            "rate": {"exchange": ["q"]},
            "annotators": 2,
            "brief": {"guidelines": "Rate."},
            "drop_out_after": drop_out_after,
        }
    )


def test_jobs_are_planned_at_the_first_tick_then_just_after_their_deadline() -> None:
    watch = DropOutWatch({"a": job("a", 1000.0), "never": job("never", None)})
    assert watch.due(0.0) == ["a"]  # a job without a deadline is never planned on the clock
    watch.planned("a", 0.0, 100.0)
    assert watch.due(100.0) == []  # at the deadline: still in time
    assert watch.due(100.5) == ["a"]
    watch.planned("a", 101.0, None)  # nobody holds open work now
    assert watch.due(101.0 + RECHECK) == []
    assert watch.due(101.5 + RECHECK) == ["a"]  # work given from outside is seen, late


def test_work_the_bot_gives_brings_the_next_look_forward() -> None:
    watch = DropOutWatch({"a": job("a", 50.0)})
    watch.planned("a", 0.0, None)
    watch.assigned("a", 10.0)
    assert watch.due(60.0) == [] and watch.due(60.5) == ["a"]
    watch.assigned("a", 20.0)  # later work does not push the earlier deadline back
    assert watch.due(60.5) == ["a"]
