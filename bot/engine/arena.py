"""Side by side, turn by turn (Arena-style): every message goes to two systems at once, both
replies are shown as "A" and "B", and the participant votes for the better one.

The two systems are the design's and a partner chosen with the assignment so that the pairs
of systems are balanced (``partners``); which one is A is drawn once per session from the
participant's stored seed, and both are logged (``sides_drawn``). Each system keeps its own
history: it sees the participant's messages and its own replies, never the other's. A side
that fails leaves its history as it was and makes the turn ``not_comparable`` at once (never
a loss); a reply that names its own system (the study lists the names) flags the turn's
vote, kept apart from the ranking. The vote's buttons live until the next message; a vote
ends the ballot, and the names are revealed after it where the study says so. A task that
reaches its limit with a ballot open waits for the vote, then ends.
"""

from __future__ import annotations

import html
import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace

from bot.core.conversation import Conversation, Turn
from bot.core.vocabulary import (
    EndReason,
    EventKind,
    FlagReason,
    RaterKind,
    VoteSource,
    Winner,
)
from bot.core.votes import TURN_QUESTION, Vote
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine import exchange_rating, task
from bot.engine.assignment import Cell
from bot.engine.callbacks import VoteTap, encode
from bot.engine.common import (
    Doing,
    Phase,
    Result,
    Transition,
    drop_keyboards,
    scenario_of,
    stale_tap,
    texts_of,
    time_is_up,
)
from bot.engine.journey import Journey, Sides
from scenarios.models import StudyBundle, Texts

CHOICES = (Winner.A, Winner.B, Winner.TIE, Winner.BOTH_BAD)
"""The vote's buttons, in order: what ``VoteTap.choice`` numbers."""
LETTERS = "AB"

TRANSITIONS = (
    Transition(
        Phase.DIALOGUE,
        Phase.DIALOGUE,
        "side by side: text / RecordUserTurn, CallSides → SidesAnswered / RecordSystemTurn,"
        " Send A, Send B, vote buttons (a failed side: RecordVote not_comparable)",
    ),
    Transition(Phase.DIALOGUE, Phase.DIALOGUE, "side by side: vote tap / RecordVote, Edit"),
)


def draw(bundle: StudyBundle, journey: Journey) -> tuple[str, str]:
    """The session's two systems, A first: the design's system and the partner chosen with
    the assignment (``partners``; drawn at random for a journey assigned before partners
    were), in an order drawn from the participant's stored seed and the session."""
    programs = [s.id for s in bundle.study.systems if s.type != "wizard"]
    own = journey.task.system_id
    others = [s for s in programs if s != own] or [
        s.id for s in bundle.study.systems if s.id != own
    ]
    rng = random.Random(f"{journey.seed}|{journey.session_id}|sides")
    drawn = others[rng.randrange(len(others))] if others else own
    other = journey.task.partner or drawn
    return (own, other) if rng.random() < 0.5 else (other, own)


def partners(
    bundle: StudyBundle,
    tasks: Sequence[Cell],
    cells: Mapping[Cell, int],
    unavailable: frozenset[str] = frozenset(),
) -> tuple[str | None, ...]:
    """The second system of each side-by-side task in ``tasks`` (None for other tasks):
    balanced pairs, derived from the design's assignment.

    The systems stand on a ring in study order (wizards left out); the ``n``-th session of
    system ``i`` (``n`` from ``cells``, the sessions the design counts, over side-by-side
    scenarios) is paired with the system ``1 + n mod (k - 1)`` places after it. Each system
    meets every other once in any ``k - 1`` of its sessions, so where the design balances
    the systems, every unordered pair of the ``k`` systems has the same number of sessions
    each time every system has had a multiple of ``k - 1`` (a cycle of ``k(k - 1)``
    sessions), and the first sessions of the systems already spread over different pairs.
    A partner that is failing right now gives way to the next one on the ring."""
    side_by_side = {s for s, sc in bundle.scenarios.items() if sc.kind == "side_by_side"}
    ring = [s.id for s in bundle.study.systems if s.type != "wizard"]
    held: Counter[str] = Counter()
    for (scenario, system), count in cells.items():
        if scenario in side_by_side:
            held[system] += count
    chosen: list[str | None] = []
    for scenario, own in tasks:
        if scenario not in side_by_side:
            chosen.append(None)
            continue
        chosen.append(_partner(ring, own, held[own], unavailable))
        held[own] += 1
    return tuple(chosen)


def _partner(ring: list[str], own: str, sessions: int, unavailable: frozenset[str]) -> str | None:
    if own in ring:
        at = ring.index(own)
        others = [ring[(at + step) % len(ring)] for step in range(1, len(ring))]
    else:
        others = ring
    if not others:
        return None
    start = sessions % len(others)
    turn = others[start:] + others[:start]
    return next((system for system in turn if system not in unavailable), turn[0])


def begin(bundle: StudyBundle, journey: Journey) -> Result:
    """The side-by-side task begins: its two systems drawn and logged."""
    systems = draw(bundle, journey)
    journey = journey.evolve(sides=Sides(systems, ((), ())))
    data = {"a": systems[0], "b": systems[1]}
    return journey, [fx.RecordEvent(EventKind.SIDES_DRAWN, journey.session_id, data)]


def on_event(bundle: StudyBundle, journey: Journey, event: ev.Event, now: float) -> Result | None:
    """What side by side does with ``event``; None: the dialogue's usual answer."""
    sides = journey.sides
    if sides is None:
        return None
    match event:
        case ev.TextReceived(text=text) if not journey.paused:
            if journey.pending_message is not None:  # both systems are still to answer
                waited = {"text": text}
                kind = EventKind.MESSAGE_WHILE_WAITING
                return journey, [
                    fx.RecordEvent(kind, journey.session_id, waited),
                    fx.Send(texts_of(bundle, journey).wait_for_reply),
                ]
            return _user_turn(bundle, journey, sides, text, now)
        case ev.SidesAnswered():
            return _answered(bundle, journey, sides, event, now)
        case ev.ButtonTapped(message_id=message_id) if isinstance(event.tap, VoteTap):
            return _voted(bundle, journey, sides, event.tap, message_id, now)
        case ev.Recovered() if journey.pending_message is not None:
            retried = fx.RecordEvent(EventKind.SYSTEM_CALL_RETRIED, journey.session_id)
            return journey, [retried, *_ask(bundle, journey, sides)]
    return None


def _end(bundle: StudyBundle, journey: Journey, reason: EndReason) -> Result:
    dropped = exchange_rating.drop(bundle, journey)
    journey, removed = drop_keyboards(journey, fx.Until.NEXT_TURN)
    journey = journey.evolve(sides=replace(journey.sides, ballot=None) if journey.sides else None)
    new, effects = task.end_task(bundle, journey, reason, False, Phase.DIALOGUE, dropped)
    return new, [*removed, *effects]


def _limit(bundle: StudyBundle, journey: Journey, now: float) -> EndReason | None:
    limit = scenario_of(bundle, journey).max_exchanges
    if limit is not None and journey.exchanges >= limit:
        return EndReason.EXCHANGE_LIMIT
    if time_is_up(bundle, journey, now):
        return EndReason.TIME_LIMIT
    return None


def _user_turn(
    bundle: StudyBundle, journey: Journey, sides: Sides, text: str, now: float
) -> Result:
    session = journey.session_id
    if (reason := _limit(bundle, journey, now)) is not None:
        late = fx.RecordEvent(EventKind.MESSAGE_AFTER_TIME_LIMIT, session, {"text": text})
        new, effects = _end(bundle, journey, reason)
        return new, [late, *effects]
    turn = journey.turns + 1
    journey, removed = drop_keyboards(journey, fx.Until.NEXT_TURN)  # an open ballot closes
    sides = replace(sides, ballot=None, flagged=False)
    journey = journey.evolve(turns=turn, pending_message=text, offered=(), sides=sides)
    return journey, [
        fx.RecordUserTurn(session, turn, text),
        *removed,
        *_ask(bundle, journey, sides),
    ]


def _ask(bundle: StudyBundle, journey: Journey, sides: Sides) -> list[Doing]:
    """Both systems asked at once, each with its own history and a session id of its own
    (a system that keeps state by session never mixes the two)."""
    scenario = scenario_of(bundle, journey)
    calls = tuple(
        fx.CallSystem(
            system,
            Conversation(
                session_id=f"{journey.session_id}-{letter.lower()}",
                scenario_id=scenario.id,
                brief=scenario.brief,
                history=history,
                message=journey.pending_message or "",
                system_prompt=scenario.system_prompt,
            ),
        )
        for system, history, letter in zip(sides.systems, sides.histories, LETTERS, strict=False)
    )
    return [fx.ShowTyping(), fx.CallSides(calls)]


def names_itself(bundle: StudyBundle, system: str, text: str) -> bool:
    """Whether ``text`` names ``system`` by one of the names the study lists for it."""
    names = bundle.study.side_by_side.names.get(system, ())
    return any(re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text, re.IGNORECASE) for name in names)


def _answered(
    bundle: StudyBundle, journey: Journey, sides: Sides, event: ev.SidesAnswered, now: float
) -> Result:
    texts = texts_of(bundle, journey)
    session, turn = journey.session_id, journey.turns
    message = journey.pending_message or ""
    said: list[str | None] = []
    histories = list(sides.histories)
    logged: list[dict[str, object]] = []
    for index, (system, answer) in enumerate(zip(sides.systems, event.answers, strict=True)):
        if isinstance(answer, ev.SystemReplied):
            text = "\n\n".join(t for t in answer.reply.texts if t.strip())
            said.append(text)
            histories[index] = (*histories[index], Turn(message, text))
            logged.append({"system": system, "text": text, "latency_ms": answer.latency_ms})
        else:
            said.append(None)
            logged.append(
                {"system": system, "error": answer.error, "latency_ms": answer.latency_ms}
            )
    flagged = any(
        text is not None and names_itself(bundle, system, text)
        for system, text in zip(sides.systems, said, strict=True)
    )
    comparable = all(text is not None for text in said)
    latency = max(a.latency_ms for a in event.answers)
    failures = [
        f"{letter}: {a.error}"
        for letter, a in zip(LETTERS, event.answers, strict=False)
        if isinstance(a, ev.SystemFailed)
    ]
    shown = "\n\n".join(
        f"[{letter}] {text if text is not None else '(no reply)'}"
        for letter, text in zip(LETTERS, said, strict=False)
    )
    data = {"turn": turn, "replies": logged, "flagged": flagged}
    effects: list[Doing] = [*_health(journey, sides, event)]
    effects += [
        fx.RecordSystemTurn(
            session,
            turn,
            shown if any(t is not None for t in said) else None,
            latency,
            "; ".join(failures) or None,
        ),
        fx.RecordEvent(EventKind.SIDES_REPLIED, session, data),
        *(_reply_message(texts, letter, text) for letter, text in zip(LETTERS, said, strict=False)),
    ]
    sides = Sides(sides.systems, tuple(histories), turn if comparable else None, flagged)
    journey = journey.evolve(exchanges=journey.exchanges + 1, pending_message=None, sides=sides)
    if comparable:
        buttons = _ballot(texts, turn)
        effects.append(fx.Send(texts.arena_heading, buttons, until=fx.Until.NEXT_TURN))
        return journey, effects  # a limit reached waits for the vote
    effects.append(fx.RecordVote(_vote(bundle, journey, sides, turn, Winner.NOT_COMPARABLE)))
    if (reason := _limit(bundle, journey, now)) is not None:
        new, more = _end(bundle, journey, reason)
        return new, effects + more
    return journey, effects


def _health(journey: Journey, sides: Sides, event: ev.SidesAnswered) -> list[Doing]:
    """A system that started or stopped failing with this turn, logged as in a dialogue."""
    logged: list[Doing] = []
    for system, answer in zip(sides.systems, event.answers, strict=True):
        if isinstance(answer, ev.SystemFailed) and answer.unavailable:
            data: dict[str, object] = {"system": system, "failures": answer.failures}
            logged.append(fx.RecordEvent(EventKind.SYSTEM_UNAVAILABLE, journey.session_id, data))
        elif isinstance(answer, ev.SystemReplied) and answer.recovered:
            data = {"system": system, "failures": 0}
            logged.append(fx.RecordEvent(EventKind.SYSTEM_AVAILABLE, journey.session_id, data))
    return logged


def _reply_message(texts: Texts, letter: str, text: str | None) -> fx.Send:
    """One side's reply under its label; the system's words escaped, never markup."""
    if text is None:
        return fx.Send(texts.arena_side_failed.format(side=letter))
    label = html.escape(texts.arena_side.format(side=letter))
    return fx.Send(f"<b>{label}</b>\n{html.escape(text)}", format="html")


def _labels(texts: Texts) -> tuple[str, str, str, str]:
    return (texts.arena_a_better, texts.arena_b_better, texts.arena_tie, texts.arena_both_bad)


def _ballot(texts: Texts, turn: int) -> fx.Buttons:
    a, b, tie, bad = (
        (label, encode(VoteTap(turn, choice))) for choice, label in enumerate(_labels(texts))
    )
    return ((a, b), (tie, bad))


def _vote(bundle: StudyBundle, journey: Journey, sides: Sides, turn: int, winner: Winner) -> Vote:
    session = journey.session_id
    return Vote(
        vote_id=f"{session}#{turn}",
        source=VoteSource.SIDE_BY_SIDE,
        rater=journey.participant,
        rater_kind=RaterKind.PARTICIPANT,
        system_a=sides.systems[0],
        system_b=sides.systems[1],
        winner=winner,
        question=TURN_QUESTION,
        scenario_id=journey.task.scenario_id,
        session_id=session,
        turn=turn,
        flag_reason=FlagReason.SELF_IDENTIFICATION if sides.flagged else None,
    )


def _voted(
    bundle: StudyBundle,
    journey: Journey,
    sides: Sides,
    tap: VoteTap,
    message_id: int | None,
    now: float,
) -> Result:
    if sides.ballot is None or tap.turn != sides.ballot or not 0 <= tap.choice < len(CHOICES):
        return stale_tap(bundle, journey)
    texts = texts_of(bundle, journey)
    vote = _vote(bundle, journey, sides, tap.turn, CHOICES[tap.choice])
    said = texts.arena_voted.format(choice=_labels(texts)[tap.choice])
    if bundle.study.side_by_side.reveal_names:
        said += "\n" + texts.arena_revealed.format(a=sides.systems[0], b=sides.systems[1])
    journey = journey.evolve(
        sides=replace(sides, ballot=None),
        keyboards=tuple(k for k in journey.keyboards if k.message_id != message_id),
    )
    shown: fx.Outbound = fx.Send(said) if message_id is None else fx.Edit(message_id, said)
    effects: list[Doing] = [fx.Toast(), fx.RecordVote(vote), shown]
    if (reason := _limit(bundle, journey, now)) is not None:
        new, more = _end(bundle, journey, reason)
        return new, effects + more
    return journey, effects
