"""A local Telegram Bot API emulator for tests and benchmarks.

Start a :class:`BotApiEmulator`, point a real python-telegram-bot ``Bot`` (``base_url=
emulator.base_url``) or aiogram bot (``TelegramAPIServer.from_base(emulator.server_url)``) at
it, and drive the conversation with :meth:`BotApiEmulator.participant`.
"""

from bot.pilot.emulator.chat import BotMessage, CallbackAnswer, ChatLog
from bot.pilot.emulator.flood import FloodRules
from bot.pilot.emulator.formatting import MAX_TEXT_LENGTH
from bot.pilot.emulator.keyboards import Keyboard
from bot.pilot.emulator.participant import Participant
from bot.pilot.emulator.server import ApiCall, BotApiEmulator
from bot.pilot.emulator.updates import DEFAULT_ALLOWED_UPDATES
from bot.pilot.emulator.wire import ApiError, UploadedFile

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
