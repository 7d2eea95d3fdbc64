"""A simulated participant driven by a language model (``ozlab pilot --simulator openai``).

The model is reached through the ``openai`` adapter (any OpenAI-compatible server: vLLM,
llama.cpp, Ollama, a hosted API) with a persona and the scenario's brief as its prompt. It
writes the participant's messages, and picks questionnaire buttons by number or label like
a person tapping them; a reply that names no button gets a random button, and the log says
so. A reply of ``LEAVE`` makes the participant stop there (a drop-off the pilot report
shows); ``DONE`` ends the task.
"""

from __future__ import annotations

import logging
import random
import re
from collections.abc import Sequence

from bot.core.conversation import Conversation, Turn
from bot.pilot.simulation.answering import Question
from bot.pilot.simulation.play import Talker
from bot.systems.base import SystemFailure
from bot.systems.openai import OpenAIChat
from scenarios.models import Scenario
from scenarios.simulation import Simulation

log = logging.getLogger(__name__)

LEAVE = "LEAVE"
DONE = "DONE"

PERSONAS = (
    "a careful participant who reads everything and writes full sentences",
    "a hurried participant who writes short messages, sometimes with typos",
    "a curious participant who asks follow-up questions",
    "a sceptical participant who checks what the assistant claims",
)

_CHAT_PROMPT = """You are {persona}, taking part in a study of a chat assistant.
Your task, as the study gave it to you: {brief}
Write only your next message to the assistant, nothing else. When the task is done, or you
give up, write {done}."""

_ANSWER_PROMPT = """You are {persona}, answering a questionnaire after a study task.
Answer with the number of the option you choose, or its words. If you would stop taking
part in the study here, answer {leave}."""

_RANK_PROMPT = """You are {persona}, answering a questionnaire after a study task.
Put the options in order, the one that matters most to you first: answer with their numbers
only, separated by commas."""

_COMMENT_PROMPT = """You are {persona}, answering a questionnaire after a study task.
Write your answer in one or two short sentences."""


class LanguageModelMind:
    """One participant's mind: a persona and the model behind the ``openai`` adapter."""

    def __init__(self, chat: OpenAIChat, persona: str, rng: random.Random) -> None:
        self.chat = chat
        self.persona = persona
        self.rng = rng

    def talker(self, scenario: Scenario) -> Talker:
        return _ModelTalker(self, scenario)

    async def ask(self, prompt: str, history: tuple[Turn, ...], message: str) -> str:
        conversation = Conversation("pilot", "pilot", "", history, message, system_prompt=prompt)
        try:
            reply = await self.chat.respond(conversation)
        except SystemFailure as failure:
            log.warning("the simulator's model failed: %s", failure)
            return ""
        return " ".join(reply.texts).strip()

    async def choose(
        self, question: Question, labels: Sequence[str], plan: Simulation, system: str | None
    ) -> int | None:
        options = "\n".join(f"{i}. {label}" for i, label in enumerate(labels, 1))
        prompt = _ANSWER_PROMPT.format(persona=self.persona, leave=LEAVE)
        said = await self.ask(prompt, (), f"{question.text}\n\nOptions:\n{options}")
        if said.strip().upper().startswith(LEAVE):
            return None
        picked = named_button(said, labels)
        if picked is None:
            picked = self.rng.randrange(len(labels))
            log.warning(
                "the simulator's answer %r names no button; tapped %r instead",
                said[:80],
                labels[picked],
            )
        return picked

    async def comment(self, question: Question, plan: Simulation, can_skip: bool) -> str | None:
        said = await self.ask(_COMMENT_PROMPT.format(persona=self.persona), (), question.text)
        return said or (None if can_skip else "No comment.")

    async def rank(
        self, question: Question, labels: Sequence[str], plan: Simulation, system: str | None
    ) -> list[int]:
        options = "\n".join(f"{i}. {label}" for i, label in enumerate(labels, 1))
        prompt = _RANK_PROMPT.format(persona=self.persona)
        said = await self.ask(prompt, (), f"{question.text}\n\nOptions:\n{options}")
        order = named_order(said, len(labels))
        left = [i for i in range(len(labels)) if i not in order]
        if left:
            log.warning("the simulator's order %r misses options; they come last", said[:80])
        return order + self.rng.sample(left, len(left))


def named_button(said: str, labels: Sequence[str]) -> int | None:
    """The button a reply names: its number (the first one in the reply), else its label."""
    number = re.search(r"\d+", said)
    if number is not None and 1 <= int(number.group()) <= len(labels):
        return int(number.group()) - 1
    low = said.lower()
    named = [i for i, label in enumerate(labels) if label.lower().strip() in low]
    return max(named, key=lambda i: len(labels[i])) if named else None


def named_order(said: str, count: int) -> list[int]:
    """The options a reply names by number, in its order, each once (0-based)."""
    order: list[int] = []
    for number in re.findall(r"\d+", said):
        index = int(number) - 1
        if 0 <= index < count and index not in order:
            order.append(index)
    return order


class _ModelTalker:
    def __init__(self, mind: LanguageModelMind, scenario: Scenario) -> None:
        self.mind = mind
        self.scenario = scenario
        self.prompt = _CHAT_PROMPT.format(persona=mind.persona, brief=scenario.brief, done=DONE)
        self.history: list[Turn] = []
        self.said: str | None = None
        self.max_messages = scenario.max_exchanges or 10

    async def next_message(self, replies: list[str]) -> str | None:
        reply = "\n".join(replies)
        if self.said is not None:
            self.history.append(Turn(reply, self.said))
        if len(self.history) >= self.max_messages:
            return None
        # The model plays the participant: the assistant's words are its "user" turns.
        said = await self.mind.ask(self.prompt, tuple(self.history), reply or "(the chat opens)")
        if not said or said.strip().upper().startswith(DONE):
            return None
        self.said = said
        return said
