"""The bot's command menu (``setMyCommands``): /help, /done and /withdraw, described in the
study's language, and in each language it has translations for (Telegram shows a user the
list for their app's language, else the default one)."""

from __future__ import annotations

import logging

from telegram import Bot, BotCommand
from telegram.error import TelegramError

from scenarios.models import StudyBundle, Texts

log = logging.getLogger(__name__)


def commands(texts: Texts) -> list[BotCommand]:
    return [
        BotCommand("help", texts.command_help),
        BotCommand("done", texts.command_done),
        BotCommand("withdraw", texts.command_withdraw),
    ]


async def publish_commands(bot: Bot, bundle: StudyBundle) -> None:
    """Best effort: a menu Telegram refused leaves the commands working when typed."""
    study = bundle.study
    try:
        await bot.set_my_commands(commands(study.texts))
        for language in sorted(study.translations):
            if language != study.language:
                await bot.set_my_commands(
                    commands(study.texts_for(language)), language_code=language
                )
    except TelegramError as error:
        log.warning("the command menu could not be set: %s", error)
