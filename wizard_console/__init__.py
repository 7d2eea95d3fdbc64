"""The wizard console: experimenters watch live sessions and step in (Wizard-of-Oz).

The console is its own process; it meets the bot only in the study store (see
``desk``). Importing this package does not import Textual: the bot and the plain commands
never pay for it.
"""

from bot.core.vocabulary import Gate
from wizard_console.desk import Desk, DeskError
from wizard_console.model import Line, LiveSession, WaitingReply

__all__ = ["Desk", "DeskError", "Gate", "Line", "LiveSession", "WaitingReply"]
