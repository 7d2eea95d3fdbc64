"""The automatic verdict on a replay, where the two replies can be compared without a
person: the same failure, the same events (``task_success`` and what the system did, a
language model's ``tool_success`` and its calls' arguments, or intent and entities a
service maps into its events), or the same reply."""

from __future__ import annotations

from collections.abc import Mapping

from bot.engine.phases.dialogue import END_EVENT, SUCCESS_EVENT, TOOL_SUCCESS_EVENT
from bot.store.stress_records import ReplyTaken, Verdict

Events = Mapping[str, Mapping[str, object]]

_LOGGED = frozenset({SUCCESS_EVENT, TOOL_SUCCESS_EVENT, END_EVENT})
"""The events the bot logs with a session: only these can be compared with the log."""


def _same_events(one: Events, other: Events) -> bool:
    return {k: dict(v) for k, v in one.items()} == {k: dict(v) for k, v in other.items()}


def reaches_logged(baseline: ReplyTaken, logged: Events) -> bool:
    """Whether the unchanged replay did what the system did in the study (IDIAL checks
    this first: otherwise the test says nothing about the perturbation)."""
    if baseline.error is not None:
        return False
    shown = {name: data for name, data in baseline.events.items() if name in _LOGGED}
    return _same_events(shown, logged)


def automatic_verdict(baseline: ReplyTaken, perturbed: ReplyTaken) -> tuple[Verdict, str] | None:
    """Pass or fail with the reason, or None when only a person can tell."""
    if perturbed.error is not None:
        return Verdict.FAIL, f"the system failed on the perturbed utterance: {perturbed.error}"
    if baseline.events or perturbed.events:
        if _same_events(baseline.events, perturbed.events):
            return Verdict.PASS, "the same events"
        return Verdict.FAIL, "different events: " + _difference(baseline.events, perturbed.events)
    if tuple(baseline.texts) == tuple(perturbed.texts):
        return Verdict.PASS, "the same reply"
    return None


def _difference(baseline: Events, perturbed: Events) -> str:
    lost = sorted(set(baseline) - set(perturbed))
    new = sorted(set(perturbed) - set(baseline))
    changed = sorted(
        k for k in set(baseline) & set(perturbed) if dict(baseline[k]) != dict(perturbed[k])
    )
    parts = [f"lost {', '.join(lost)}"] if lost else []
    parts += [f"new {', '.join(new)}"] if new else []
    parts += [f"{', '.join(changed)} with other data"] if changed else []
    return "; ".join(parts)
