"""Simulated participants that let ``ozlab demo`` run a whole study without people."""

from bot.simulation.policy import Experience, GiftSeeker

__all__ = ["Experience", "GiftSeeker"]
