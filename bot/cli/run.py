"""``ozlab run``: the bot, on Telegram, until SIGTERM (0) or Ctrl-C (130)."""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import logging
import os
import re
import signal
from dataclasses import replace
from urllib.parse import urlsplit

from bot.cli.flags import STUDY_FILE, database
from bot.core.errors import OzlabError, StudyDataError, TelegramSetupError
from bot.core.privacy import SECRET_ENV

NAME = "run"
TOKEN_ENV = "TELEGRAM_BOT_TOKEN"
API_URL_ENV = "OZLAB_BOT_API_URL"
TELEGRAM_PORTS = (443, 80, 88, 8443)
"""The only ports Telegram posts webhooks to."""
LISTEN = "127.0.0.1:8443"
WEBHOOK_SECRET_ENV = "OZLAB_WEBHOOK_SECRET"


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
    run.add_argument(
        "--webhook",
        type=webhook_url,
        metavar="URL",
        help="receive updates by webhook at this https URL (the reverse proxy's, which passes"
        f" its path on to --listen) instead of polling Telegram; env {WEBHOOK_SECRET_ENV} for"
        " a fixed secret token (default: a new random one each start)",
    )
    run.add_argument(
        "--listen",
        type=listen_address,
        metavar="HOST:PORT",
        help=f"where the bot listens for the proxy with --webhook (default {LISTEN})",
    )


def loopback(host: str) -> bool:
    """``host`` names this machine only (``localhost``, ``127.0.0.0/8``, ``::1``)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def webhook_url(text: str) -> str:
    """A URL Telegram can post to: ``https``, on one of Telegram's ports, with no query,
    fragment or password; ``http`` only to this machine (the local Bot API emulator)."""
    parts = urlsplit(text)
    try:
        port = parts.port
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} has no valid port") from None
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise argparse.ArgumentTypeError(f"{text!r} is not an https:// URL")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise argparse.ArgumentTypeError(f"{text!r}: Telegram posts to a path, nothing more")
    if parts.scheme == "http" and not loopback(parts.hostname):
        raise argparse.ArgumentTypeError(f"{text!r}: Telegram posts webhooks over https only")
    if parts.scheme == "https" and port is not None and port not in TELEGRAM_PORTS:
        ports = ", ".join(map(str, TELEGRAM_PORTS))
        raise argparse.ArgumentTypeError(f"{text!r}: Telegram posts to ports {ports} only")
    return text


def listen_address(text: str) -> tuple[str, int]:
    """``host:port`` where the bot listens for the proxy (``[::1]:8443`` for IPv6)."""
    host, colon, port = text.rpartition(":")
    example = f"e.g. {LISTEN}"
    if not colon or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not host:port (port 1 to 65535), {example}")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        if not re.fullmatch(r"[0-9A-Fa-f:.]+", host):
            raise argparse.ArgumentTypeError(f"{text!r}: no IPv6 address in the brackets")
    elif not re.fullmatch(r"[A-Za-z0-9.-]+", host):
        raise argparse.ArgumentTypeError(
            f"{text!r}: no host name or address (an IPv6 one goes in brackets), {example}"
        )
    return host, int(port)


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
    if args.listen is not None and args.webhook is None:
        raise StudyDataError("--listen is where a webhook is served: give --webhook URL too")
    from scenarios.loading import adapters_beside, load_study

    adapters_beside(args.study)
    bundle = load_study(args.study)
    from bot.runtime.app import (  # after the checks: they need no Telegram library
        BotConfig,
        run_bot,
    )
    from bot.runtime.logging import report_crash, setup_logging
    from bot.telegram.webhook import Webhook, secret_token

    webhook = None
    if args.webhook is not None:
        host, port = args.listen or listen_address(LISTEN)
        webhook = Webhook(args.webhook, host, port, secret_token(os.environ))
    hidden = [token, secret] + ([webhook.secret_token] if webhook is not None else [])
    setup_logging(logging.DEBUG if args.verbose else logging.INFO, hidden)
    config = BotConfig(
        db=args.db, token=token, secret=secret, bot_api_url=args.bot_api_url, webhook=webhook
    )
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
