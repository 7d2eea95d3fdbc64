"""``ozlab``: the researcher's command line. Each command is a thin layer over a function.

Every error ozlab raises on purpose is an :class:`~bot.errors.OzlabError`, caught once in
:func:`main`: one line on stderr (a study file's problems: one line each), no traceback, and
the error's own exit status (``bot/errors.py`` lists them); Ctrl-C is one line and 130, a
wrong argument argparse's usage error and 2. Anything else is a bug: its traceback goes
through the redacting log handler and the status is 1.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from bot.arguments import count, port
from bot.errors import OzlabError, StudyDataError, TelegramSetupError, told
from bot.privacy import SECRET_ENV

if TYPE_CHECKING:
    from scenarios.models import StudyBundle

TOKEN_ENV = "TELEGRAM_BOT_TOKEN"
API_URL_ENV = "OZLAB_BOT_API_URL"
ANALYTICS_COMMANDS = {
    "report": "the per-system evaluation report: terminal, --format md|html|json",
    "export": "tidy long-format CSV (or Parquet) and a codebook, for R or SPSS;"
    " export payments: platform ids, statuses and time given",
    "import": "add data collected outside Telegram: import responses|annotations FILE.csv",
    "power": "participants needed per system for an effect size (pingouin's power tests)",
}


def version() -> str:
    """The installed ozlab's version, for a paper's methods section and bug reports."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("ozlab")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ozlab", description="Human evaluations of dialogue systems over Telegram."
    )
    parser.add_argument("--version", action="version", version=f"ozlab {version()}")
    commands = parser.add_subparsers(dest="command", required=True)

    check = commands.add_parser("check", help="validate a study file and everything it names")
    check.add_argument("study", help="a shipped study's name (e.g. hmd) or a YAML file")
    check.add_argument(
        "--ping",
        action="store_true",
        help="also send one message to every http, openai and rasa system: latency, and"
        " whether the reply parses (status 4 when one fails)",
    )

    run = commands.add_parser("run", help="run a study on Telegram")
    run.add_argument("study", help="a shipped study's name (e.g. hmd) or a YAML file")
    run.add_argument("--db", type=Path, default=Path("ozlab.sqlite"), help="study database")
    run.add_argument(
        "--bot-api-url",
        default=os.environ.get(API_URL_ENV, "https://api.telegram.org"),
        help=f"Bot API server (env {API_URL_ENV}; default Telegram's)",
    )
    run.add_argument("-v", "--verbose", action="store_true", help="log more")
    run.add_argument(
        "--no-pacing",
        action="store_true",
        help="send without keeping Telegram's flood limits: only against a local Bot API"
        " emulator, never Telegram (it answers 429 and the messages are delayed)",
    )

    schema = commands.add_parser(
        "schema", help="write JSON Schemas of the study files, for editor completion"
    )
    schema.add_argument("--out", type=Path, default=Path("schemas"))

    new = commands.add_parser("new", help="write a commented starter study into a new folder")
    new.add_argument("folder", type=Path)

    serve = commands.add_parser(
        "serve-demo", help="serve the demo shop over HTTP, to try the http adapter against it"
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=port, default=8080)
    serve.add_argument("--variant", choices=["v1", "v0"], default="v1")

    backup = commands.add_parser(
        "backup", help="a consistent copy of a study database, also while the bot runs (cron)"
    )
    backup.add_argument("--db", type=Path, required=True, help="the study database")
    backup.add_argument("--out", type=Path, required=True, help="the copy (replaced whole)")

    erase = commands.add_parser(
        "erase",
        help="erase a participant (GDPR art. 17), the expired, or every chat id; with a bot"
        " running, the bot does it",
    )
    erase.add_argument("--db", type=Path, required=True, help="the study database")
    erase.add_argument("pseudonym", nargs="*", help="participants to erase, as in the data")
    erase.add_argument(
        "--telegram-id", type=int, action="append", default=[], help=f"needs {SECRET_ENV}"
    )
    erase.add_argument("--expired", action="store_true", help="those past the study's retention")
    erase.add_argument("--chat-keys", action="store_true", help="drop every encrypted chat id")
    erase.add_argument(
        "--backups",
        type=Path,
        metavar="DIR",
        help="erase everyone ever erased from --db from each backup in DIR too",
    )

    invite = commands.add_parser(
        "invite", help="single-use invitation links (https://t.me/BOT?start=CODE) and a CSV"
    )
    invite.add_argument("--db", type=Path, required=True, help="the study database")
    who = invite.add_mutually_exclusive_group(required=True)
    who.add_argument("--n", type=count, help="how many participant invitations")
    who.add_argument("--annotators", type=count, help="how many annotators of --job to invite")
    invite.add_argument("--job", help="the annotation job the annotators rate for")
    invite.add_argument("--study", help="the study of --job, when the database holds none")
    invite.add_argument("--bot", required=True, help="the bot's username, e.g. my_study_bot")
    invite.add_argument("--out", type=Path, help="the CSV (invitations.csv, annotators.csv)")

    demo = commands.add_parser("demo", help="play a study offline with simulated participants")
    demo.add_argument("-n", "--participants", type=count, default=12)
    demo.add_argument("--db", type=Path, default=Path("ozlab-demo.sqlite"))
    demo.add_argument("--study", default="hmd")
    demo.add_argument("--seed", type=int, default=1)

    chat = commands.add_parser(
        "chat",
        help="play the participant yourself, in the terminal: the real bot on a local"
        " Telegram emulator (no token, loopback only)",
    )
    chat.add_argument("study", help="a shipped study's name (e.g. hmd) or a YAML file")
    chat.add_argument("--db", type=Path, help="study database (default: a new scratch one)")
    chat.add_argument("--lang", default="en", help="your Telegram language, e.g. it")

    pilot = commands.add_parser(
        "pilot",
        help="pilot a study with simulated participants a language model drives, then see "
        "where it breaks: ozlab report --pilot",
    )
    pilot.add_argument("study", help="the study file (or a shipped study's id)")
    pilot.add_argument("-n", "--participants", type=count, default=20)
    pilot.add_argument("--db", type=Path, default=Path("ozlab-pilot.sqlite"))
    pilot.add_argument("--seed", type=int, default=1)
    pilot.add_argument(
        "--simulator",
        choices=("openai", "scripted"),
        default="openai",
        help="openai: a language model on an OpenAI-compatible server plays each participant; "
        "scripted: the scenarios' simulation: blocks (as ozlab demo)",
    )
    pilot.add_argument("--simulator-url", help="the server, e.g. http://127.0.0.1:8000 (vLLM)")
    pilot.add_argument("--simulator-model", default="default", help="the model name it serves")
    pilot.add_argument("--simulator-key-env", help="environment variable with its API key")

    from wizard_console.cli import add_wizard_commands  # standard library only, no Textual

    add_wizard_commands(commands)

    from bot.stress_cli import add_stress_commands  # linguistic stress tests (issue 12)

    add_stress_commands(commands)

    # Handed to analytics.cli before parsing (see main): listed here for --help only.
    for name, text in ANALYTICS_COMMANDS.items():
        commands.add_parser(name, help=text, add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:2] == ["export", "payments"]:  # the bot's own: no pandas for a list of ids
        args = _payments_parser().parse_args(argv[2:])
        return told(lambda: _payments(args), "ozlab")
    if argv and argv[0] in ANALYTICS_COMMANDS:
        # pandas, pingouin and matplotlib are loaded for these commands only, never by the bot
        from analytics.cli import main as analytics_main

        return analytics_main(argv, prog="ozlab")
    args = _parser().parse_args(argv)
    return told(lambda: _command(args), "ozlab")


def _command(args: argparse.Namespace) -> int:
    if args.command == "check":
        from scenarios.check import check

        _adapters_beside(args.study)
        check(args.study, ping=args.ping)
        return 0
    if args.command == "run":
        return _run(args)
    if args.command == "chat":
        return _chat(args)
    if args.command == "serve-demo":
        return _serve_demo(args)
    if args.command == "schema":
        from scenarios.schema import write_schemas

        for path in write_schemas(args.out):
            print(path)
        return 0
    if args.command == "new":
        return _new(args)
    if args.command == "wizard":
        from wizard_console.cli import run_wizard

        return run_wizard(args)
    if args.command == "backup":
        return _backup(args)
    if args.command == "erase":
        return _erase(args)
    if args.command == "invite":
        return _invite(args)
    if args.command == "stress":
        from bot.stress_cli import run_stress

        return run_stress(args)
    if args.command == "pilot":
        return _pilot(args)
    return _demo(args)


def _pilot(args: argparse.Namespace) -> int:
    from bot.errors import SystemSetupError

    simulator = None
    if args.simulator == "openai":
        if not args.simulator_url:
            raise SystemSetupError(
                "--simulator openai needs --simulator-url (an OpenAI-compatible server, e.g. "
                "http://127.0.0.1:8000 for vLLM or http://127.0.0.1:11434 for Ollama)"
            )
        from pydantic import ValidationError

        from bot.pilot import simulator_spec

        try:
            simulator = simulator_spec(
                args.simulator_url, args.simulator_model, args.simulator_key_env
            )
        except ValidationError as error:
            first = error.errors()[0]
            raise SystemSetupError(f"--simulator-url: {first['msg']}") from None
    bundle = _load(args.study)
    from bot import running
    from bot.demo import clear_demo_database
    from bot.logging_setup import setup_logging
    from bot.pilot import pilot_study

    setup_logging(logging.WARNING, [])
    with running.claim(args.db, "ozlab pilot") as writer:  # held from before the replacing
        clear_demo_database(args.db)
        played = asyncio.run(
            pilot_study(
                bundle,
                args.db,
                participants=args.participants,
                seed=args.seed,
                simulator=simulator,
                env=os.environ,
                writer=writer,
            )
        )
    finished = sum(p.finished for p in played)
    print(f"Study {bundle.study.id!r}: {len(played)} simulated participants, {finished} finished")
    print(f"Database: {args.db.resolve()}")
    print(f"Where it breaks: ozlab report --db {args.db} --pilot")
    return 0


def _new(args: argparse.Namespace) -> int:
    from scenarios.starter import write_starter

    written = write_starter(args.folder)
    print("\n".join(map(str, written)))
    print(f"Check it with: ozlab check {args.folder / 'study.yaml'}")
    return 0


def _serve_demo(args: argparse.Namespace) -> int:
    from bot.systems.served_demo import serve_demo

    def started(url: str) -> None:
        print(
            f"The demo shop ({args.variant}) answers POST {url} — in a study file:\n"
            f"  - type: http\n    id: shop-http\n    url: {url}\n"
            "    response: {text: null, messages: messages, events: events,"
            " event_data: event_data}\n"
            "Stop it with Ctrl-C.",
            flush=True,
        )

    asyncio.run(serve_demo(args.host, args.port, args.variant, started=started))
    return 0


def _adapters_beside(ref: str) -> None:
    """A study's own adapter classes (type: python) may live beside the study file: run and
    check import them from there alike."""
    if Path(ref).suffix in (".yaml", ".yml"):
        sys.path.insert(0, str(Path(ref).resolve().parent))


def _load(ref: str) -> StudyBundle:
    from scenarios.loading import load_study

    _adapters_beside(ref)
    return load_study(ref)


def _run(args: argparse.Namespace) -> int:
    token = os.environ.get(TOKEN_ENV, "")
    secret = os.environ.get(SECRET_ENV, "")
    if not token:
        raise TelegramSetupError(f"set {TOKEN_ENV} to the token @BotFather gave you")
    if len(secret) < 16:
        raise StudyDataError(
            f"set {SECRET_ENV} to a long random secret (16 characters or more) and keep it for"
            " the whole study: it makes the participants' pseudonyms; for example "
            f"export {SECRET_ENV}=$(python3 -c 'import secrets; print(secrets.token_urlsafe(32))')"
        )
    bundle = _load(args.study)
    from bot.app import BotConfig, run_bot  # after the checks: they need no Telegram library
    from bot.logging_setup import report_crash, setup_logging

    setup_logging(logging.DEBUG if args.verbose else logging.INFO, [token, secret])
    config = BotConfig(db=args.db, token=token, secret=secret, bot_api_url=args.bot_api_url)
    if args.no_pacing:
        config = replace(config, pacing=None)

    received: list[signal.Signals] = []

    async def serve() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()

        def stopping(signum: signal.Signals) -> None:
            received.append(signum)
            stop.set()

        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stopping, signum)
        await run_bot(bundle, config, stop=stop)

    try:
        asyncio.run(serve())
    except OzlabError:
        raise  # told in one line by main
    except Exception as error:
        report_crash(error)
        return 1
    if signal.SIGINT in received:  # a clean stop all the same; a service manager sends SIGTERM
        raise KeyboardInterrupt
    return 0


def _chat(args: argparse.Namespace) -> int:
    bundle = _load(args.study)
    from bot.chatting import run_chat, scratch_database
    from bot.logging_setup import setup_logging

    setup_logging(logging.WARNING, [])
    return run_chat(bundle, args.db or scratch_database(), args.lang)


def _backup(args: argparse.Namespace) -> int:
    """Quiet when it worked, as cron likes it: cron mails only a failure's one line."""
    from bot.store import Access, open_store

    async def copy() -> None:
        store = await open_store(args.db, access=Access.READ)
        try:
            await store.backup(args.out)
        finally:
            await store.close()

    asyncio.run(copy())
    return 0


def _erase(args: argparse.Namespace) -> int:
    from bot.rights.erasure import Request, erase, pseudonym_of

    secret = os.environ.get(SECRET_ENV, "")
    people = [*args.pseudonym, *(pseudonym_of(t, secret) for t in args.telegram_id)]
    if not (people or args.expired or args.chat_keys or args.backups):
        raise StudyDataError("name a pseudonym, --telegram-id, --expired, --chat-keys or --backups")
    request = Request(
        args.db, people, chat_keys=args.chat_keys, expired=args.expired, backups=args.backups
    )
    for line in erase(request, secret):
        print(line)
    return 0


def _invite(args: argparse.Namespace) -> int:
    from bot.invitations import bot_username, check_out, new_invitations, write_invitations
    from bot.store import open_store

    bot = bot_username(args.bot)
    if args.annotators is not None:
        return _invite_annotators(args, bot)
    if args.job or args.study:
        raise StudyDataError("--job and --study go with --annotators")
    args.out = args.out or Path("invitations.csv")
    check_out(args.out, args.n)

    async def make() -> list[str]:
        store = await open_store(args.db)
        try:
            return await new_invitations(store, args.n)
        finally:
            await store.close()

    codes = asyncio.run(make())
    write_invitations(codes, bot, args.out)
    print(f"{len(codes)} single-use invitations in {args.out} (code, link): each lets one")
    print("participant in; a used or unknown code is refused politely.")
    return 0


def _invite_annotators(args: argparse.Namespace, bot: str) -> int:
    from bot.annotator_invitations import Invited, invite_annotators, write_annotators
    from bot.invitations import check_out
    from bot.store import open_store

    if not args.job:
        raise StudyDataError("--annotators needs --job: the annotation job they rate for")
    out = args.out or Path("annotators.csv")
    check_out(out, args.annotators)

    async def make() -> Invited:
        store = await open_store(args.db)
        try:
            return await invite_annotators(store, args.study, args.job, args.annotators)
        finally:
            await store.close()

    invited = asyncio.run(make())
    write_annotators(invited, bot, out)
    print(f"{len(invited.annotators)} annotators of job {invited.job!r} in {out} (annotator,")
    print(f"job, code, link); the job has {invited.targets} targets ({invited.new_targets} new).")
    print("Annotators are not participants: each link lets one annotator in, once.")
    return 0


def _payments_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ozlab export payments",
        description="Per recruitment platform id: status and minutes given, for payment and"
        f" bonuses. The ids are opened with {SECRET_ENV} from the environment.",
    )
    parser.add_argument("--db", type=Path, required=True, help="the study database")
    parser.add_argument("--out", type=Path, help="the CSV (default: standard output)")
    return parser


def _payments(args: argparse.Namespace) -> int:
    from bot.payments import payment_rows, write_payments
    from bot.privacy import Privacy
    from bot.store import Access, open_store

    secret = os.environ.get(SECRET_ENV, "")
    if not secret:
        raise StudyDataError(f"set {SECRET_ENV} to the secret the study ran with")
    privacy = Privacy(secret)

    async def read() -> list[tuple[str, ...]]:
        store = await open_store(args.db, access=Access.READ)
        try:
            return payment_rows(await store.payments(), privacy)
        finally:
            await store.close()

    write_payments(asyncio.run(read()), args.out)
    return 0


def _demo(args: argparse.Namespace) -> int:
    bundle = _load(args.study)
    from bot import running
    from bot.demo import clear_demo_database, play_study
    from bot.logging_setup import setup_logging
    from bot.simulation.play import Played
    from bot.summary import format_summary, summarize

    setup_logging(logging.WARNING, [])
    with running.claim(args.db, "ozlab demo") as writer:  # held from before the replacing
        clear_demo_database(args.db)

        async def play() -> list[Played]:
            print(f"Playing {bundle.study.id!r} with {args.participants} simulated participants")
            sys.stdout.flush()
            return await play_study(
                bundle, args.db, participants=args.participants, seed=args.seed, writer=writer
            )

        started = time.perf_counter()
        played = asyncio.run(play())
        elapsed = time.perf_counter() - started
    print(f"Study {bundle.study.id!r}: {len(played)} simulated participants in {elapsed:.1f} s\n")
    print(format_summary(summarize(args.db)))
    print(f"\nDatabase: {args.db.resolve()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
