"""``ozlab run``: the bot, on Telegram, until SIGTERM (0) or Ctrl-C (130)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
from dataclasses import replace

from bot.cli.flags import STUDY_FILE, database
from bot.core.errors import OzlabError, StudyDataError, TelegramSetupError
from bot.core.privacy import SECRET_ENV

NAME = "run"
TOKEN_ENV = "TELEGRAM_BOT_TOKEN"
API_URL_ENV = "OZLAB_BOT_API_URL"


def add(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = commands.add_parser(NAME, help="run a study on Telegram")
    run.add_argument("study", help=STUDY_FILE)
    database(run, default="ozlab.sqlite", help="study database")
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


def run(args: argparse.Namespace) -> int:
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
    from scenarios.loading import adapters_beside, load_study

    adapters_beside(args.study)
    bundle = load_study(args.study)
    from bot.runtime.app import (  # after the checks: they need no Telegram library
        BotConfig,
        run_bot,
    )
    from bot.runtime.logging import report_crash, setup_logging

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
