"""The experimenter's side of a study, whatever face shows it: the sessions, the transcripts
and the commands to the bot that the Textual console (``wizard_console``) and the web page
(``lab_web``) both use, so that neither writes the other's logic again.

The desk is its own process's; it meets the bot only in the study store. Nothing here
imports Textual or aiohttp.
"""

from bot.desk.desk import Desk, DeskError
from bot.desk.model import Line, LiveSession, WaitingReply

__all__ = ["Desk", "DeskError", "Line", "LiveSession", "WaitingReply"]
