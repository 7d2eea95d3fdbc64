"""Every error ozlab raises on purpose, in one tree (as httpx documents its own)::

    OzlabError                  anything ozlab reports in one line; the CLI catches it once
    ├── StudyFileError          a study, scenario or instrument file is wrong (file, line, field)
    │   └── StudyError          ...every problem of one load (scenarios.loading), one per line
    ├── StudyDataError          a value given on the command line, in the environment or in a
    │                           file to import is wrong (an unknown session, a gate scope, a
    │                           CSV column, a secret too short, a folder already written)
    ├── SystemSetupError        a system under test cannot be built (an adapter's settings, a
    │                           custom class that does not import, a port already in use)
    ├── StoreError              the study database cannot be used as it is (not a database,
    │   │                       chat ids sealed with another secret)
    │   ├── SchemaError         ...its schema is older or newer than this ozlab
    │   └── StoreUnreachable    ...its server cannot be reached now (down, restarting): an
    │                           outage the bot waits out, a command's one line elsewhere
    └── TelegramSetupError      the bot cannot start talking to Telegram (token, server,
                                a webhook Telegram refuses or a port it cannot listen on)

Each class has its exit status for the command line (``exit_code``): a supervisor or a
script can tell a broken study file from an unreachable Telegram; :func:`explain` is what
every command line prints for one, and :func:`told` runs a command so that each of these,
a file it cannot read or write (3, as a wrong value) and Ctrl-C (130, :data:`INTERRUPTED`)
end it with one line on stderr. A mistake in
the arguments themselves is argparse's: its usage line, one line of error, status 2.
:data:`EXIT_STATUSES` is the one table of every status a command ends with: no two causes
share a number, and the README and ``ozlab --help`` show this table.

A participant never sees any of these: the runner answers them politely and logs the
traceback.

Outside the tree on purpose: ``bot.systems.base.SystemFailure`` (and its ``SystemTimeout``),
a system under test failing *during* a session (down, slow, garbage). It is part of the
adapter contract, the runner catches it at every call, records it with the exchange and
tells the participant the system is unavailable; it never reaches a command line. Errors
that mean a bug in ozlab (``TypeError``, ``RuntimeError``...) stay outside too: the CLI
logs their traceback (through the redacting log handler) and exits with 1.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable

from bot.core.visible_text import visible

DONE = 0
CRASH = 1
"""A bug in ozlab: its traceback is in the log."""
USAGE = 2
"""argparse's own status for a wrong argument; nothing else ends with it."""
NOT_YET = 8
"""A wizard's command the bot has not applied within ``--wait`` (it will when it runs)."""
NOT_APPLIED = 9
"""A wizard's command the bot found expired or rejected: told apart from a crash."""
INTERRUPTED = 130
"""The status of a command stopped by Ctrl-C: the shell's own for SIGINT (128 + 2)."""
READER_GONE = 141
"""The status of a command whose output went into a pipe nobody reads any more: the shell's
own for SIGPIPE (128 + 13)."""


class OzlabError(Exception):
    """A problem ozlab explains in one line; ``exit_code`` is the CLI's status for it."""

    exit_code = 1


class StudyFileError(OzlabError):
    """Its message starts with where: ``file:line: field: message``, one problem a line."""

    exit_code = 10


class StudyDataError(OzlabError, ValueError):
    exit_code = 3


class SystemSetupError(OzlabError):
    """``field`` names the system's setting at fault (``entry``, ``options``,
    ``api_key_env``...), so that ``ozlab check`` can point at its line in the study file.
    A speech engine that cannot be built (``bot.speech``) is one too: it is the systems'
    ears and voice."""

    exit_code = 4

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class StoreError(OzlabError):
    exit_code = 5


class SchemaError(StoreError):
    exit_code = 6


class StoreUnreachable(StoreError):
    """The database server cannot be reached now, or its connection was lost (a restart, a
    failover, a reboot): weather, not a fault. ``ozlab run`` waits it out and goes on from
    what the store says; any other command ends with its line (status 5)."""


class TelegramSetupError(OzlabError):
    exit_code = 7


class PlatformError(OzlabError):
    """A recruitment platform refused a request or could not be reached (``ozlab
    prolific``): said without the token or any participant's id."""

    exit_code = 11


EXIT_STATUSES: tuple[tuple[int, str], ...] = (
    (DONE, "done (ozlab run: stopped by SIGTERM)"),
    (CRASH, "a crash: a bug in ozlab; its traceback is in the log, token and secret redacted"),
    (USAGE, "a wrong argument: argparse's usage line, then one line (-n 0, a word for a number)"),
    (
        StudyDataError.exit_code,
        "a value given is wrong: an unknown session or study, an import file's rows, a secret"
        " too short; a file or folder named that cannot be read or written, a report's --out"
        " in a format ozlab does not write",
    ),
    (
        SystemSetupError.exit_code,
        "a system under test cannot be built (or does not answer ozlab check --ping or demo)",
    ),
    (StoreError.exit_code, "the database cannot be used (missing, not ozlab's, another secret)"),
    (SchemaError.exit_code, "the database is of an older or newer ozlab"),
    (
        TelegramSetupError.exit_code,
        "Telegram refused the token or the --webhook URL, --bot-api-url is not a Bot API"
        " server, or --listen's port is already in use",
    ),
    (NOT_YET, "ozlab wizard ACTION: not applied within --wait (it will be when the bot runs)"),
    (NOT_APPLIED, "ozlab wizard ACTION: expired or rejected by the bot"),
    (
        StudyFileError.exit_code,
        "a study, scenario or instrument file is wrong (file:line: field: message)",
    ),
    (
        PlatformError.exit_code,
        "ozlab prolific: the platform refused a request (the token, the study id) or cannot"
        " be reached",
    ),
    (INTERRUPTED, "stopped by Ctrl-C (what was written stays written)"),
    (READER_GONE, "its output went into a pipe whose reader stopped (ozlab report | head)"),
)
"""Every status a command ends with and why, in one place: ``ozlab --help`` prints it."""


def status_table() -> str:
    """:data:`EXIT_STATUSES` as the help's epilog shows it, one status a line."""
    import textwrap

    lines = [
        textwrap.fill(why, 79, initial_indent=f"  {code:>3}  ", subsequent_indent=" " * 7)
        for code, why in EXIT_STATUSES
    ]
    return "\n".join(["exit statuses:", *lines])


def explain(error: OzlabError, prog: str) -> str:
    """What a command line prints for ``error``: the message after the program's name, but a
    study file's problems as they are (``file:line: field: message``), the form editors and
    terminals jump to."""
    said = visible(str(error), lines=True)  # it may quote a file's or a system's text
    return said if isinstance(error, StudyFileError) else f"{prog}: {said}"


_PASSWORD = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]+:/{1,2}[^\s/@:]*):\S*@")


def without_passwords(text: str) -> str:
    """``text`` with the password of every URL in it shown as ``***`` (up to the URL's last
    ``@``: a password may hold one): a database URL on the command line may carry one, and
    no error line shows it."""
    return _PASSWORD.sub(r"\1:***@", text)


def told(command: Callable[[], int], prog: str) -> int:
    """Run ``command``; its own errors, a file it cannot read or write and Ctrl-C end it with
    one line on stderr and their status, never a traceback (what was written before stays
    written)."""
    try:
        return command()
    except OzlabError as error:
        print(without_passwords(explain(error, prog)), file=sys.stderr)
        return error.exit_code
    except BrokenPipeError:  # ``ozlab report | head``: the reader took what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no flush error at exit
        return READER_GONE
    except OSError as error:
        if error.filename is None:  # not a file named on the command line: a crash
            raise
        # A file or folder given that cannot be read or written (missing, a file where a
        # folder goes, no permission): a wrong value, said the way Unix tools say it.
        print(without_passwords(f"{prog}: {error.filename}: {error.strerror}"), file=sys.stderr)
        return StudyDataError.exit_code
    except KeyboardInterrupt:
        print(f"{prog}: stopped by Ctrl-C", file=sys.stderr)
        return INTERRUPTED
