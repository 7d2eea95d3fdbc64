"""The console's actions as plain commands, for scripts and remote shells.

Each function takes the parsed arguments and an open desk, prints, and returns an exit
code: 0 done, 9 the bot found it no longer possible (expired) or invalid (rejected), 8 the
bot did not apply it in time (it will when it runs); ``bot.core.errors`` keeps the one table. A
mistake (an unknown session, a gate on something that is not a scope) is a
:class:`~bot.core.errors.StudyDataError` and a database that cannot be used a
:class:`~bot.core.errors.StoreError`: ``ozlab`` reports them in one line with their own statuses
(3, 5, 6), as for every command.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
from collections.abc import Awaitable, Callable

from bot.core.errors import DONE, NOT_APPLIED, NOT_YET, StudyDataError
from bot.core.visible_text import visible
from bot.core.vocabulary import CommandOutcome
from bot.desk import formatting as fmt
from bot.desk.desk import OUTCOME_WORDS, Desk

APPLIED = DONE


def login_name() -> str:
    """Who is at the keyboard, when ``--as`` does not say."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name (some containers)
        return "wizard"


def run(args: argparse.Namespace, wizard: str) -> int:
    """One plain command, from start to end (the desk is asynchronous: run here)."""
    return asyncio.run(_run(args, wizard))


async def _run(args: argparse.Namespace, wizard: str) -> int:
    async with await Desk.open(args.db, wizard) as desk:
        return await ACTIONS[args.action](args, desk)


async def sessions(args: argparse.Namespace, desk: Desk) -> int:
    for s in await desk.live_sessions(
        include_ended=args.all, study=args.study, system=args.system, state=args.state
    ):
        print(fmt.session_line(s))
    return APPLIED


async def waiting(args: argparse.Namespace, desk: Desk) -> int:
    for w in await desk.waiting_replies():
        proposed = " / ".join(visible(text) for text in w.proposed)
        print(f"{w.session_id} turn={w.turn} since={fmt.clock(w.since)}")
        print(f"  participant: {visible(w.message)}")
        print(f"  system: {proposed or '(nothing: a wizard writes it)'}")
    return APPLIED


async def transcript(args: argparse.Namespace, desk: Desk) -> int:
    if not await desk.knows(args.session):
        return _unknown(args.session)
    for line in await desk.transcript(args.session):
        text = visible(line.text, lines=True).replace("\n", "\n" + " " * 26)
        print(f"{fmt.clock(line.at)} {visible(fmt.who(line)):<16} {text}")
        if line.original is not None:
            print(f"{'':25} (the system said: {visible(line.original)})")
    return APPLIED


async def _send(args: argparse.Namespace, desk: Desk, label: str, write: Awaitable[int]) -> int:
    """Write one command and report what the bot made of it."""
    command_id = await write
    if args.wait <= 0:
        print(f"#{command_id} {label}: written")
        return APPLIED
    outcome = await desk.wait(command_id, args.wait)
    if outcome is None:
        print(
            f"#{command_id} {label}: the bot has not applied it within {args.wait:g} s;"
            " it will when it runs (is ozlab run running on this database?)"
        )
        return NOT_YET
    print(f"#{command_id} {label}: {OUTCOME_WORDS[outcome]}")
    return APPLIED if outcome is CommandOutcome.APPLIED else NOT_APPLIED


def _unknown(session: str) -> int:
    raise StudyDataError(f"no session {session!r} (ozlab wizard sessions lists them)")


Action = Callable[[argparse.Namespace, Desk], Awaitable[int]]


def _session_command(kind: str, **fields: str) -> Action:
    """A command about one session; ``fields`` maps payload keys to argument names."""

    async def command(args: argparse.Namespace, desk: Desk) -> int:
        payload = {key: getattr(args, name) for key, name in fields.items()}
        label = f"{kind} {args.session}"
        return await _send(args, desk, label, desk.session_command(kind, args.session, **payload))

    return command


def _answered_as(args: argparse.Namespace) -> dict[str, object]:
    """``as``: voice or text where the wizard said (``--voice``, ``--text``)."""
    chosen = getattr(args, "answer_as", None)
    return {} if chosen is None else {"as": chosen}


async def say(args: argparse.Namespace, desk: Desk) -> int:
    if not await desk.knows(args.session):
        return _unknown(args.session)
    payload = {"text": args.text, **_answered_as(args)}
    return await _send(
        args, desk, f"say {args.session}", desk.command("say", args.session, **payload)
    )


async def reply(args: argparse.Namespace, desk: Desk) -> int:
    if args.approve:
        payload: dict[str, object] = {"action": "approve"}
    elif args.edit is not None:
        payload = {"action": "edit", "text": args.edit}
    else:
        payload = {"action": "replace", "text": args.replace}
    payload |= _answered_as(args)
    label = f"reply {payload['action']} {args.session}"
    return await _send(args, desk, label, desk.session_command("reply", args.session, **payload))


async def gate(args: argparse.Namespace, desk: Desk) -> int:
    target = args.session
    scope = target if target.startswith(("system:", "study:")) else f"session:{target}"
    if scope.startswith("session:") and not await desk.knows(target):
        return _unknown(target)
    on = args.state == "on"
    label = f"gate {scope} {args.state}"
    return await _send(args, desk, label, desk.gate(scope, on, args.auto_send))


async def note(args: argparse.Namespace, desk: Desk) -> int:
    if not await desk.knows(args.session):
        return _unknown(args.session)
    turn = args.turn
    if turn is None:
        shown = await desk.live_sessions(include_ended=True)
        found = [s for s in shown if s.session_id == args.session]
        turn = found[0].turn if found else None
    label = f"note {args.session}"
    return await _send(
        args, desk, label, desk.command("note", args.session, turn=turn, text=args.text)
    )


ACTIONS: dict[str, Action] = {
    "sessions": sessions,
    "waiting": waiting,
    "transcript": transcript,
    "say": say,
    "reply": reply,
    "end": _session_command("end", reason="reason"),
    "success": _session_command("success"),
    "fail": _session_command("fail"),
    "pause": _session_command("pause"),
    "resume": _session_command("resume"),
    "start": _session_command("start"),
    "gate": gate,
    "note": note,
}
