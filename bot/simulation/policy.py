"""Scripted participants for ``ozlab demo``: they chat with the real bot and fill questionnaires.

Pure logic, no I/O. A :class:`GiftSeeker` pursues the HMD gift task (an adventure game for
Alex, who uses Linux, not already on Alex's wishlist, added to one's own wishlist) by reading
the system's replies as a person would: numbered lists, titles, questions, confirmations.
Its only source of randomness is the ``random.Random`` it is given, so a seed replays a whole
simulated study exactly.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

GOAL_PLATFORM = "linux"


@dataclass(frozen=True)
class Experience:
    """What a participant remembers when rating: how it went, in a few counts.

    ``clarifications``: replies that asked back (good when the request was unclear);
    ``guesses``: unclear requests the system acted on without asking; ``fallbacks``: replies
    saying it did not understand; ``ignored_constraints``: lists that broke the constraints.
    """

    exchanges: int = 0
    task_success: bool = False
    max_exchanges: int = 10
    clarifications: int = 0
    guesses: int = 0
    fallbacks: int = 0
    ignored_constraints: int = 0


@dataclass(frozen=True)
class _Item:
    """One numbered line of a reply: '2. Lantern Road, €17.99 (Windows, Mac, Linux, Switch)'."""

    number: int
    title: str
    price: float | None
    platforms_known: bool
    linux: bool


_LINE_RE = re.compile(r"^\s*(\d+)\.\s+(.+?)\s*$", re.MULTILINE)
_PRICE_RE = re.compile(r"€\s?(\d+(?:\.\d+)?)")
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")


def parse_items(text: str) -> list[_Item]:
    """The numbered games in a reply, with what the line says about price and platforms."""
    items = []
    for match in _LINE_RE.finditer(text):
        rest = match.group(2)
        title = re.split(r":|,| \(", rest, maxsplit=1)[0].strip()
        if not title:
            continue
        price_match = _PRICE_RE.search(rest)
        price = 0.0 if re.search(r"\bfree\b", rest) else None
        if price_match:
            price = float(price_match.group(1))
        details = rest[len(title) :].lower()
        known = "(" in details or " for " in details
        items.append(_Item(int(match.group(1)), title, price, known, GOAL_PLATFORM in details))
    return items


# Phrasings per intent. {ref} is a game reference, {a}/{b} two of them, {budget} a price.
_SEARCH = (
    "Hi, I would like to search for adventure games on linux",
    "Can you find me an adventure game that runs on Linux?",
    "I'm looking for adventure games for linux",
    "show me adventure games available on linux",
    "Any adventure games for Linux?",
    "My friend Alex likes adventure games and has a Linux machine. What do you recommend?",
    "Hello! Do you have adventure games for Linux?",
    "adventure games on linux under {budget} euros please",
    "I need an adventure game for Linux, ideally below {budget} euros",
)
_VAGUE_START = (
    "Hi! I need a gift for my friend.",
    "Hello, can you help me find a game?",
    "I want to buy a present for a friend",
    "Hi, I'm looking for a game",
)
_CONSTRAINTS = (
    "adventure games for linux",
    "Something adventurous that runs on Linux, please.",
    "He likes adventure games and has a linux pc",
    "adventure, on linux",
    "An adventure game for Linux under {budget} euros",
)
_ALEX_FIRST = (
    "What is on Alex's wishlist?",
    "Can you show me Alex's wishlist first?",
    "Hi! Which games are on my friend Alex's wishlist?",
)
_CHECK = (
    "Is {ref} on Alex's wishlist?",
    "Can you check if {ref} is already on Alex's wishlist?",
    "Does Alex already have {ref}?",
    "is {ref} already in his wishlist?",
    "Please check whether Alex's wishlist contains {ref}.",
)
_BULK_CHECK = (
    "Which of these are already on Alex's wishlist?",
    "Are any of these on Alex's wishlist?",
    "Can you check which of them Alex already has on his wishlist?",
)
_ADD = (
    "Please add {ref} to my wishlist.",
    "Add {ref} to my wishlist",
    "Great, put {ref} on my wishlist please",
    "I'll take {ref}. Add it to my wishlist, please.",
    "ok, add {ref} to my wish list",
)
_ADD_IT = ("Yes, please add it to my wishlist.", "Yes please", "yes, add it", "Sure, add it!")
_VAGUE_ADD = ("I want to add a game to my wishlist", "Add a game to my wishlist, please.")
_COMPARE = (
    "Can you compare {a} and {b}?",
    "compare {a} with {b}",
    "What is the difference between {a} and {b}?",
    "Which is better, {a} or {b}?",
)
_DECLINE = ("No, thanks.", "no", "No, let me pick another one.")
_STUCK = (
    "I am looking for an adventure game for Linux.",
    "Please show me adventure games that run on Linux.",
)
_TYPO_WORDS = frozenset(
    {"adventure", "adventures", "linux", "games", "wishlist", "compare", "already", "search"}
)


class GiftSeeker:
    """A simulated participant doing the HMD gift task with varied, sometimes misspelt, wording."""

    def __init__(self, rng: random.Random, *, max_messages: int = 10, typo_rate: float = 0.2):
        self.rng = rng
        self.max_messages = max_messages
        self.typo_rate = typo_rate
        self.route = rng.choice(("search", "search", "vague", "alex_first"))
        self.wants_compare = rng.random() < 0.35
        self.wants_bulk_check = rng.random() < 0.25
        self.wants_vague_add = rng.random() < 0.2
        self.budget = rng.choice((20, 25, 30))
        self.trusts_memory = rng.random() < 0.6
        self.alex_list_seen = False
        self.sent = 0
        self.pool: dict[str, _Item] = {}
        self.listing: list[_Item] = []
        self.known_alex: set[str] = set()
        self.cleared: set[str] = set()
        self.choice: str | None = None
        self.compared = False
        self.comparing: tuple[str, str] | None = None
        self.last_kind = ""
        self.succeeded = False
        self.clarifications = 0
        self.guesses = 0
        self.fallbacks = 0
        self.ignored = 0
        self.stuck = 0
        self._read: list[str] | None = None

    # ----------------------------------------------------------------- public API

    def observe(self, system_texts: list[str]) -> None:
        """Read a reply now (e.g. to learn :attr:`succeeded` at once); read once per list."""
        if system_texts and system_texts is not self._read:
            self._read = system_texts
            self._observe("\n".join(system_texts))

    def next_message(self, system_texts: list[str]) -> str | None:
        """What the participant types next, or None to stop (the caller then sends /done)."""
        self.observe(system_texts)
        if self.succeeded or self.sent >= self.max_messages or self.stuck >= 3:
            return None
        kind, text = self._decide("\n".join(system_texts))
        self.last_kind = kind
        self.sent += 1
        return self._typo(text)

    def experience(self, task_success: bool | None = None) -> Experience:
        """What this participant saw; ``task_success`` overrides its own impression if given."""
        return Experience(
            exchanges=self.sent,
            task_success=self.succeeded if task_success is None else task_success,
            max_exchanges=self.max_messages,
            clarifications=self.clarifications,
            guesses=self.guesses,
            fallbacks=self.fallbacks,
            ignored_constraints=self.ignored,
        )

    def rate(self, item_id: str, low: int, high: int, experience: Experience) -> int:
        """A questionnaire answer on ``low..high`` that reflects the conversation, plus noise."""
        quality = _quality(item_id, experience)
        span = high - low
        value = low + quality * span + self.rng.gauss(0.0, 0.15 * span)
        return max(low, min(high, round(value)))

    def comment(self, experience: Experience) -> str | None:
        """Sometimes a short free-text remark about the most striking thing; often nothing."""
        if self.rng.random() < 0.5:
            return None
        remarks: list[str] = []
        if experience.guesses:
            remarks += [
                "It added a game before I had said which one I wanted.",
                "When my request was vague it just guessed instead of asking.",
            ]
        if experience.ignored_constraints:
            remarks.append("It suggested games that do not run on Linux, although I asked.")
        if experience.fallbacks:
            remarks.append("It did not understand some of my messages.")
        if not experience.task_success:
            remarks.append("I could not finish the task.")
        if not remarks:
            remarks += [
                "Quick and polite, it found a good gift for Alex.",
                "Easy to use; checking Alex's wishlist was handy.",
                "Nice assistant, the answers were clear and short.",
            ]
        return self.rng.choice(remarks)

    # ----------------------------------------------------------------- reading replies

    def _observe(self, text: str) -> None:
        low = text.lower()
        clarifying = _is_clarification(low)
        if clarifying:
            self.clarifications += 1
        elif self.last_kind in ("vague", "vague_add"):
            self.guesses += 1
        if "did not understand" in low or "can only read text" in low:
            self.fallbacks += 1
            self.stuck += 1
        else:
            self.stuck = 0
        if re.search(r"\badded\b.+\bto (?:your wishlist|yours)\b", low):
            self.succeeded = True
            return
        items = parse_items(text)
        if items:
            self.listing = items
        if "alex's wishlist has" in low:
            self.known_alex.update(item.title for item in items)
            self.alex_list_seen = True
            return
        if items and self.last_kind in ("search", "constraints", "vague", "stuck"):
            if any(item.platforms_known and not item.linux for item in items) and (
                self.last_kind != "vague"
            ):
                self.ignored += 1
            if self.last_kind != "vague":
                self.pool = {item.title: item for item in items}
        if "already on alex's wishlist" in low:
            self._learn_alex(text)
        if "not on alex's wishlist" in low and self.choice and self.choice.lower() in low:
            self.cleared.add(self.choice)
        if "none of these games is on alex's wishlist" in low:
            self.cleared.update(self.pool)
        if self.last_kind == "compare" and self.comparing and "how they compare" in low:
            self.compared = True
            a, b = (self.pool.get(t) for t in self.comparing)
            prices = [(x.price or 0.0, x.title) for x in (a, b) if x is not None]
            if prices and self.rng.random() < 0.7:
                self.choice = min(prices)[1]
            else:
                self.choice = self.rng.choice(self.comparing)

    def _learn_alex(self, text: str) -> None:
        """Read which titles the system says are already on Alex's wishlist."""
        low = text.lower()
        sentence = low.split("already on alex's wishlist")[0]
        sentence = sentence.rsplit("\n", 1)[-1]
        for title in list(self.pool) + ([self.choice] if self.choice else []):
            if title.lower() in sentence:
                self.known_alex.add(title)
        if "the other games are not" in low:
            self.cleared.update(t for t in self.pool if t not in self.known_alex)
        if self.choice in self.known_alex:
            self.choice = None

    # ----------------------------------------------------------------- deciding

    def _decide(self, text: str) -> tuple[str, str]:
        low = text.lower()
        if self.sent == 0:
            return self._opening()
        if "do you still want to add it" in low:
            if self.choice:
                self.known_alex.add(self.choice)
                self.choice = None
            return "decline", self.rng.choice(_DECLINE)
        if "did you mean one of these" in low and self.listing:
            return "answer", self._disambiguate()
        if "what kind of game" in low:
            return "constraints", self._fill(self.rng.choice(_CONSTRAINTS))
        if self.stuck:
            return "stuck", self.rng.choice(_STUCK)
        candidates = self._candidates()
        if not candidates:  # nothing listed yet, or every listed game is ruled out
            self.pool = {}
            return "search", self._fill(self.rng.choice(_SEARCH))
        if "which game would you like to compare with" in low:
            first = next((c for c in candidates if c.lower() in low), candidates[0])
            other = next((c for c in candidates if c != first), first)
            self.comparing = (first, other)
            return "compare", self._ref(other, allow_number=False)
        if "which two games" in low and len(candidates) >= 2:
            a, b = self.rng.sample(candidates, 2)
            self.comparing = (a, b)
            return "compare", f"{self._ref(a)} and {self._ref(b)}"
        if self.wants_bulk_check and not self.cleared and not self.known_alex:
            self.wants_bulk_check = False
            return "bulk", self.rng.choice(_BULK_CHECK)
        if self.wants_compare and not self.compared and len(candidates) >= 2:
            self.wants_compare = False
            a, b = self.rng.sample(candidates[:5], 2)
            self.comparing = (a, b)
            template = self.rng.choice(_COMPARE)
            return "compare", template.format(a=self._ref(a), b=self._ref(b))
        choice = self.choice
        if choice is None or choice not in candidates:
            cleared = [c for c in candidates if c in self.cleared]
            choice = self.choice = self.rng.choice(cleared or candidates)
        if "which game would you like to add" in low or "which one would you like to add" in low:
            return "answer", self._ref(choice)
        remembers = self.alex_list_seen and self.trusts_memory
        if choice not in self.cleared and not remembers:
            return "check", self.rng.choice(_CHECK).format(ref=self._ref(choice))
        if self.wants_vague_add:
            self.wants_vague_add = False
            return "vague_add", self.rng.choice(_VAGUE_ADD)
        offered = "would you like to add it" in low and choice.lower() in low
        if offered and self.rng.random() < 0.5:
            return "add", self.rng.choice(_ADD_IT)
        return "add", self.rng.choice(_ADD).format(ref=self._ref(choice))

    def _opening(self) -> tuple[str, str]:
        if self.route == "vague":
            return "vague", self.rng.choice(_VAGUE_START)
        if self.route == "alex_first":
            return "alex", self.rng.choice(_ALEX_FIRST)
        return "search", self._fill(self.rng.choice(_SEARCH))

    def _candidates(self) -> list[str]:
        """Titles from the search results that fit Alex and are not known to be bad."""
        return [
            item.title
            for item in self.pool.values()
            if item.title not in self.known_alex and (item.linux or not item.platforms_known)
        ]

    def _disambiguate(self) -> str:
        wanted = self.choice or ""
        for item in self.listing:
            if item.title == wanted or (item.linux and not wanted):
                return self.rng.choice((f"number {item.number}", item.title))
        fits = [i for i in self.listing if i.linux] or self.listing
        return f"the {_ORDINALS[min(fits[0].number, len(_ORDINALS)) - 1]} one"

    def _ref(self, title: str, allow_number: bool = True) -> str:
        """How the participant names a game: its title, sometimes its number in the last list."""
        numbered = next((i.number for i in self.listing if i.title == title), None)
        roll = self.rng.random()
        if allow_number and numbered is not None and roll < 0.35:
            if numbered <= len(_ORDINALS) and roll < 0.18:
                return f"the {_ORDINALS[numbered - 1]} one"
            return f"number {numbered}"
        return title

    def _fill(self, template: str) -> str:
        return template.format(budget=self.budget)

    def _typo(self, text: str) -> str:
        """Sometimes misspell one content word: swap two letters or drop one."""
        if self.rng.random() >= self.typo_rate:
            return text
        words = text.split(" ")
        spots = [i for i, w in enumerate(words) if w.lower().strip(",.?!") in _TYPO_WORDS]
        titles = {w.lower() for t in self.pool for w in t.split() if len(w) >= 6 and w.isalpha()}
        spots += [i for i, w in enumerate(words) if w.lower() in titles]
        if not spots:
            return text
        i = self.rng.choice(spots)
        word = words[i]
        core = len(word.rstrip(",.?!"))
        if core < 5:
            return text
        at = self.rng.randrange(1, core - 2)
        if self.rng.random() < 0.5:
            typo = word[:at] + word[at + 1] + word[at] + word[at + 2 :]
        else:
            typo = word[:at] + word[at + 1 :]
        words[i] = typo
        return " ".join(words)


def _is_clarification(low: str) -> bool:
    return any(
        cue in low
        for cue in (
            "what kind of game",
            "which game would you like",
            "which two games",
            "did you mean",
            "which one did you mean",
            "have not shown you any games",
        )
    )


_DIMENSIONS: dict[str, tuple[str, ...]] = {
    "understanding": ("understand", "constraint"),
    "management": ("manag", "clarif"),
    "generation": ("generat", "grammat", "polite", "concise"),
    "usefulness": ("useful", "use the system again", "use it again"),
}


def _dimension(item: str) -> str:
    """The HMD criterion an item id or question text is about: the earliest cue wins."""
    text = item.lower()
    found = [
        (text.find(cue), name) for name, cues in _DIMENSIONS.items() for cue in cues if cue in text
    ]
    return min(found)[1] if found else "overall"


def _quality(item_id: str, e: Experience) -> float:
    """How good the conversation was on one questionnaire dimension, from 0 to 1."""
    dimension = _dimension(item_id)
    late = max(0, e.exchanges - 5) / max(1, e.max_exchanges)
    success = 1.0 if e.task_success else 0.0
    ignored, guesses, fallbacks = (
        min(e.ignored_constraints, 2),
        min(e.guesses, 2),
        min(e.fallbacks, 3),
    )
    if dimension == "understanding":
        q = 0.7 + 0.2 * success - 0.3 * ignored - 0.1 * fallbacks - 0.1 * guesses
    elif dimension == "management":
        q = 0.75 + 0.1 * min(e.clarifications, 2) - 0.35 * guesses - 0.1 * fallbacks
    elif dimension == "generation":
        q = 0.85 - 0.08 * fallbacks
    elif dimension == "usefulness":
        q = 0.35 + 0.4 * success - 0.3 * late - 0.15 * ignored - 0.15 * guesses
    else:
        q = 0.45 + 0.35 * success - 0.1 * ignored - 0.1 * guesses - 0.05 * fallbacks
    return max(0.0, min(1.0, q))
