"""The built-in demo system: a rule-based video-game shop assistant for the HMD gift task."""

from bot.systems.demo.catalogue import ALEX_WISHLIST, CATALOGUE, Game
from bot.systems.demo.shop import TASK_SUCCESS, DemoShop, Variant

__all__ = ["ALEX_WISHLIST", "CATALOGUE", "TASK_SUCCESS", "DemoShop", "Game", "Variant"]
