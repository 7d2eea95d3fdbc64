"""A local Telegram Bot API emulator for tests and benchmarks.

Start a :class:`BotApiEmulator`, point a real python-telegram-bot ``Bot`` (``base_url=
emulator.base_url``) or aiogram bot (``TelegramAPIServer.from_base(emulator.server_url)``) at
it, and drive the conversation with :meth:`BotApiEmulator.participant`.
"""

from bot.emulator.chat import BotMessage, CallbackAnswer, ChatLog
from bot.emulator.flood import FloodRules
from bot.emulator.formatting import MAX_TEXT_LENGTH
from bot.emulator.keyboards import Keyboard
from bot.emulator.participant import Participant
from bot.emulator.server import ApiCall, BotApiEmulator
from bot.emulator.updates import DEFAULT_ALLOWED_UPDATES
from bot.emulator.wire import ApiError, UploadedFile

__all__ = [
    "DEFAULT_ALLOWED_UPDATES",
    "MAX_TEXT_LENGTH",
    "ApiCall",
    "ApiError",
    "BotApiEmulator",
    "BotMessage",
    "CallbackAnswer",
    "ChatLog",
    "FloodRules",
    "Keyboard",
    "Participant",
    "UploadedFile",
]
