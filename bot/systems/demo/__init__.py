"""The built-in demo systems: a rule-based video-game shop assistant for the HMD gift task
and the task-based studies, and a small-talk companion for open-chat studies (HRI CUES)."""

from bot.systems.demo.catalogue import ALEX_WISHLIST, CATALOGUE, Game
from bot.systems.demo.chat import DemoChat
from bot.systems.demo.shop import TASK_SUCCESS, DemoShop, Variant

__all__ = ["ALEX_WISHLIST", "CATALOGUE", "TASK_SUCCESS", "DemoChat", "DemoShop", "Game", "Variant"]
