"""Minimal echo bots in their own process, the baselines of ``bench/exchanges.py``.

``ptb-httpx``: python-telegram-bot's ``Application`` with ``MessageHandler(filters.TEXT)``,
256 concurrent updates and the default ``HTTPXRequest``. ``ptb-aiohttp``: the same with
ozlab's ``AiohttpRequest``. ``aiogram``: aiogram 3's ``Dispatcher`` and a router, polling
through ``AiohttpSession``. Each prints ``READY`` on stdout once it polls and stops cleanly on
SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys

KINDS = ("ptb-httpx", "ptb-aiohttp", "aiogram")


async def run_ptb(
    url: str, token: str, *, aiohttp: bool, poll_timeout: int, stop: asyncio.Event
) -> None:
    """The canonical PTB echo bot, started and stopped by hand instead of ``run_polling``."""
    from telegram import Update
    from telegram.ext import ApplicationBuilder, ContextTypes, MessageHandler, filters

    from bot.telegram.request import use_aiohttp

    builder = ApplicationBuilder().token(token).base_url(f"{url}/bot").concurrent_updates(256)
    if aiohttp:
        builder = use_aiohttp(builder, 256)
    application = builder.build()

    async def echo(update: Update, _: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.effective_message
        if message is not None and message.text is not None:
            await message.reply_text(message.text)

    application.add_handler(MessageHandler(filters.TEXT, echo))
    async with application:
        assert application.updater is not None
        await application.updater.start_polling(timeout=poll_timeout)
        await application.start()
        print("READY", flush=True)
        await stop.wait()
        await application.updater.stop()
        await application.stop()


async def run_aiogram(url: str, token: str, *, poll_timeout: int, stop: asyncio.Event) -> None:
    """The canonical aiogram 3 echo bot: a router with one text handler, long polling."""
    from aiogram import Bot, Dispatcher, F, Router
    from aiogram.client.session.aiohttp import AiohttpSession
    from aiogram.client.telegram import TelegramAPIServer
    from aiogram.types import Message

    router = Router()

    @router.message(F.text)
    async def echo(message: Message) -> None:
        await message.answer(message.text or "")

    dispatcher = Dispatcher()
    dispatcher.include_router(router)
    session = AiohttpSession(api=TelegramAPIServer.from_base(url))
    bot = Bot(token, session=session)

    async def announce() -> None:
        print("READY", flush=True)

    dispatcher.startup.register(announce)
    polling = asyncio.create_task(
        dispatcher.start_polling(bot, polling_timeout=poll_timeout, handle_signals=False)
    )
    stopped = asyncio.create_task(stop.wait())
    await asyncio.wait({polling, stopped}, return_when=asyncio.FIRST_COMPLETED)
    if not polling.done():
        await dispatcher.stop_polling()
        await polling
    stopped.cancel()
    polling.result()


async def _serve(args: argparse.Namespace) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    if args.kind == "aiogram":
        await run_aiogram(args.url, args.token, poll_timeout=args.poll_timeout, stop=stop)
    else:
        await run_ptb(
            args.url,
            args.token,
            aiohttp=args.kind == "ptb-aiohttp",
            poll_timeout=args.poll_timeout,
            stop=stop,
        )


def main(argv: list[str] | None = None) -> int:
    """Run the chosen echo bot until signalled."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=KINDS)
    parser.add_argument("--url", required=True, help="emulator base, http://127.0.0.1:PORT")
    parser.add_argument("--token", required=True)
    parser.add_argument("--poll-timeout", type=int, default=5)
    asyncio.run(_serve(parser.parse_args(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
