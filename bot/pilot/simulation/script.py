"""A simulated participant's side of a dialogue, from the scenario's ``simulation:`` block.

Nothing here knows any study's domain: the words come from the study's files (its
``simulation:`` block), or, without one, from the scenario's brief in generic sentences.
Pure logic, no I/O; the only randomness is the ``random.Random`` it is given.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from scenarios.models import Scenario
from scenarios.simulation import ReplyRule, Simulation

_GENERIC_OFF_TASK = ("sorry, one moment", "hm", "wait, what was I doing?", "ok")
_DEFAULT_MAX = 8
_LINE_RE = re.compile(r"^\s*(\d+)[.)]\s+(.+?)\s*$", re.MULTILINE)
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Listed:
    """One line of a numbered list a system sent: its number and what it names."""

    number: int
    title: str


def numbered(text: str) -> list[Listed]:
    """The numbered lines of a reply, each named by what comes before ",", ":", " (" or " - "."""
    found = []
    for match in _LINE_RE.finditer(text):
        title = re.split(r":|,| \(| - ", match.group(2), maxsplit=1)[0].strip()
        if title:
            found.append(Listed(int(match.group(1)), title))
    return found


def from_brief(scenario: Scenario) -> Simulation:
    """What a participant says when the study gives no ``simulation:`` block: the brief's
    own sentences, asked for in generic words, and nothing of any other study."""
    sentences = [s.strip() for s in _SENTENCE_RE.split(scenario.brief.strip()) if s.strip()]
    asks = [f"I need help with this: {s[0].lower()}{s[1:]}" for s in sentences[:3]]
    return Simulation(
        say=("Hello, can you help me?", *asks),
        otherwise=("Could you tell me more?", "OK, what do you suggest?", "Thank you."),
        off_task=_GENERIC_OFF_TASK,
    )


class ScriptedTalker:
    """Says the block's lines, answers what the system said by its rules, gives up after
    ``max_messages``; sometimes misspells a word or says something off task."""

    def __init__(self, scenario: Scenario, rng: random.Random) -> None:
        self.rng = rng
        self.plan = scenario.simulation or from_brief(scenario)
        self.max_messages = self.plan.max_messages or scenario.max_exchanges or _DEFAULT_MAX
        self._lines = list(self.plan.say)
        if self.plan.order == "random":
            rng.shuffle(self._lines)
        self.sent = 0
        self.listed: list[Listed] = []
        self.item: Listed | None = None
        self._dropped: set[str] = set()

    async def next_message(self, replies: list[str]) -> str | None:
        """What the participant types next, or None to stop (the caller sends /done)."""
        if self.sent >= self.max_messages:
            return None
        self.sent += 1
        text = "\n".join(replies)
        self._read(text)
        if (
            self.sent > 1
            and self.plan.off_task_rate
            and self.rng.random() < self.plan.off_task_rate
        ):
            return self.rng.choice(self.plan.off_task or _GENERIC_OFF_TASK)
        return self._typo(self._fill(self._decide(text)))

    def _decide(self, text: str) -> str:
        low = text.lower()
        rule = next((r for r in self.plan.replies if _matches(r, low)), None) if text else None
        if rule is not None:
            if rule.another and self.item is not None:
                self._dropped.add(self.item.title)
                self._pick()
            return self.rng.choice(rule.say)
        if self._lines:
            return self._lines.pop(0)
        if self.plan.otherwise:
            return self.rng.choice(self.plan.otherwise)
        return self.rng.choice(self.plan.say) if self.plan.say else "OK."

    def _read(self, text: str) -> None:
        listed = numbered(text)
        if listed:
            self.listed = listed
            if self.item is None or self.item.title not in {i.title for i in listed}:
                self._pick()

    def _pick(self) -> None:
        left = [i for i in self.listed if i.title not in self._dropped]
        self.item = self.rng.choice(left) if left else None

    def _fill(self, line: str) -> str:
        item = self.item
        return line.replace("{item}", item.title if item else "the first one").replace(
            "{n}", str(item.number if item else 1)
        )

    def _typo(self, text: str) -> str:
        """Sometimes misspell one longer word: swap two letters or drop one."""
        if not self.plan.typo_rate or self.rng.random() >= self.plan.typo_rate:
            return text
        words = text.split(" ")
        spots = [i for i, w in enumerate(words) if len(w) >= 6 and w.isalpha() and w.islower()]
        if not spots:
            return text
        i = self.rng.choice(spots)
        word = words[i]
        at = self.rng.randrange(1, len(word) - 2)
        if self.rng.random() < 0.5:
            words[i] = word[:at] + word[at + 1] + word[at] + word[at + 2 :]
        else:
            words[i] = word[:at] + word[at + 1 :]
        return " ".join(words)


def _matches(rule: ReplyRule, low: str) -> bool:
    return any(cue.lower() in low for cue in rule.when)
