"""``ozlab wizard``: the console, and the same actions as plain commands for scripts.

Standard library only at import (and ``bot.cli.arguments``, which imports nothing else): the
bot process never loads Textual, and the plain commands load only the desk.
"""

from __future__ import annotations

import argparse
from typing import Any

from bot.cli.arguments import seconds
from bot.cli.flags import DB_ENV, DB_HELP, database
from bot.core.errors import NOT_APPLIED, NOT_YET, SchemaError, StoreError, StudyDataError

NAME = "wizard"
DEFAULT_DB = "ozlab.sqlite"


def _common(top: bool = False) -> Any:
    """--db and --as, accepted before or after the action. An action's parser has no
    defaults (SUPPRESS), so it keeps what was given before it (``ozlab wizard --db X say``).
    A new parser each time: parents share their argument objects."""
    common = argparse.ArgumentParser(add_help=False)
    if top:
        database(common, default=DEFAULT_DB, help="study database")
    else:
        common.add_argument(
            "--db", default=argparse.SUPPRESS, help=f"study database, {DB_HELP} (env {DB_ENV})"
        )
    wizard: object = None if top else argparse.SUPPRESS
    common.add_argument(
        "--as",
        dest="wizard",
        metavar="NAME",
        default=wizard,
        help="the name stored with every command (default: your login name)",
    )
    return common


def add(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``wizard`` and its actions on ``ozlab``'s subcommands."""
    wizard = commands.add_parser(
        NAME,
        parents=[_common(top=True)],
        help="watch live sessions and step in (Wizard-of-Oz); without an action: the console",
        description="Without an action: the console. Actions write one command for the bot and"
        f" wait for it to be applied (exit 0), expired or rejected ({NOT_APPLIED}), or not yet"
        f" applied within --wait ({NOT_YET}: it will be when the bot runs);"
        f" {StudyDataError.exit_code}: a mistake (an unknown session), {StoreError.exit_code}"
        f" and {SchemaError.exit_code}: a database that cannot be used.",
    )
    wizard.set_defaults(action=None)
    actions = wizard.add_subparsers(dest="action", metavar="ACTION")

    def action(name: str, help: str, *, wait: bool = True) -> argparse.ArgumentParser:
        parser = actions.add_parser(name, parents=[_common()], help=help, description=help)
        if wait:
            parser.add_argument(
                "--wait",
                type=seconds,
                default=10.0,
                metavar="SECONDS",
                help="how long to wait for the bot to apply it (0: do not wait; default 10)",
            )
        return parser

    sessions = action("sessions", "one live session per line, its id first", wait=False)
    sessions.add_argument("--all", action="store_true", help="also ended and past sessions")
    sessions.add_argument("--study", help="only this study's (its id)")
    sessions.add_argument("--system")
    sessions.add_argument("--state")
    action("waiting", "the replies waiting for a wizard, oldest first", wait=False)
    action("transcript", "a session's transcript", wait=False).add_argument("session")

    say = action("say", "write to the participant as the system")
    say.add_argument("session")
    say.add_argument("text")
    _answer_as(say)
    reply = action("reply", "decide a waiting reply: send it as is, edited, or your own")
    reply.add_argument("session")
    how = reply.add_mutually_exclusive_group(required=True)
    how.add_argument("--approve", action="store_true", help="send the system's reply as is")
    how.add_argument("--edit", metavar="TEXT", help="send TEXT instead; the original is kept")
    how.add_argument("--replace", metavar="TEXT", help="reply TEXT in the system's place")
    _answer_as(reply)
    end = action("end", "end the session: closing line, then the questionnaire")
    end.add_argument("session")
    end.add_argument("--reason", required=True)
    for name, words in (
        ("success", "mark the task as succeeded"),
        ("fail", "mark the task as failed"),
        ("pause", "pause the session (the participant is asked to wait)"),
        ("resume", "resume a paused session"),
        ("start", "start a held session (lab studies)"),
    ):
        action(name, words).add_argument("session")
    gate = action("gate", "gate a session (or system:ID, study:ID): replies wait for a wizard")
    gate.add_argument("session", help="a session id, system:<id> or study:<id>")
    gate.add_argument("state", choices=("on", "off"))
    gate.add_argument(
        "--auto-send", type=seconds, metavar="SECONDS", help="send a held reply by itself after"
    )
    note = action("note", "attach a note to an exchange")
    note.add_argument("session")
    note.add_argument("text")
    note.add_argument("--turn", type=int, help="the exchange (default: the latest)")


def _answer_as(parser: argparse.ArgumentParser) -> None:
    """--voice or --text: how the wizard's words go (default: as the task sends replies)."""
    form = parser.add_mutually_exclusive_group()
    for flag, words in (
        ("voice", "as a voice note, spoken by the study's text-to-speech"),
        ("text", "as text, in a task whose replies are spoken"),
    ):
        form.add_argument(
            f"--{flag}", dest="answer_as", action="store_const", const=flag, help=f"send it {words}"
        )


def run(args: argparse.Namespace) -> int:
    from wizard_console import commands

    wizard = args.wizard or commands.login_name()
    if args.action is None:
        from wizard_console.app import run_console  # the only place Textual is imported

        return run_console(args.db, wizard)
    return commands.run(args, wizard)
