"""A simulated participant for open chats: small talk with some variety, then goodbye."""

from __future__ import annotations

import random

_OPENERS = ("Hi! I'm Sam.", "Hello there, my name is Alex.", "hey :) I'm Kim")
_LINES = (
    "I spent the weekend hiking in the hills, it was lovely.",
    "Do you like films? I watched a great thriller yesterday.",
    "What is your favourite food? Mine is pasta.",
    "The weather is quite grey today.",
    "I would love to travel to Japan one day.",
    "I have been learning to play the guitar.",
    "Honestly I'm a bit tired today.",
    "What do you do for fun?",
    "Tell me something interesting!",
    "haha that's funny",
    "I read a good book last month, a mystery novel.",
    "Do you have any hobbies?",
)


class SmallTalker:
    """Says hello, chats about everyday things, and stops after ``max_messages``."""

    succeeded = False  # an open chat has no task to succeed at

    def __init__(self, rng: random.Random, *, max_messages: int = 8) -> None:
        self.rng = rng
        self.max_messages = max_messages
        self.sent = 0
        self._lines = list(_LINES)
        rng.shuffle(self._lines)

    def observe(self, system_texts: list[str]) -> None:
        """Nothing to learn from the replies: the chatter follows its own mood."""

    def next_message(self, system_texts: list[str]) -> str | None:
        if self.sent >= self.max_messages:
            return None
        self.sent += 1
        if self.sent == 1:
            return self.rng.choice(_OPENERS)
        return self._lines[(self.sent - 2) % len(self._lines)]
