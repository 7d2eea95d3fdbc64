"""Within subjects: between two systems the participant is told, in the study's words and
language, that the assistant has changed, and nothing of the first system is left to tap
or to arrive once the second starts."""

from __future__ import annotations

import pytest

from bot.core.conversation import Conversation, SystemReply
from bot.core.vocabulary import EventKind
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.common import CONSENT_YES
from bot.engine.flow import step
from bot.engine.journey import Journey, Task
from bot.pilot.emulator import BotApiEmulator
from scenarios.models import Design, Scenario, Study, StudyBundle, Texts
from tests.conftest import StartBot
from tests.storage_probe import command_log
from tests.test_wizard_cli import ozlab_wizard
from tests.test_wizard_desk import until

CHANGED = "From now on you will talk to a different assistant"


def bundle(**texts: str) -> StudyBundle:
    study = Study(
        id="within",
        title="Two assistants",
        texts=Texts(welcome="Hello", consent="Privacy agreement", declined="Bye", **texts),
        systems=({"type": "demo", "id": "first"}, {"type": "demo", "id": "second"}),
        scenarios=("one", "two"),
        design=Design(systems="within", type="latin_square"),
        translations={"it": {"system_changed": "Ora parli con un altro assistente."}},
    )
    scenarios = {
        name: Scenario(id=name, title=f"Task {name}", brief=f"Do task {name}.")
        for name in ("one", "two")
    }
    return StudyBundle(study=study, scenarios=scenarios, questionnaires={})


def in_first_task(within: StudyBundle, language: str | None = None) -> Journey:
    journey = step(within, "p1", None, ev.StartCommand(language=language), 0.0).journey
    journey = step(within, "p1", journey, ev.ButtonTapped(CONSENT_YES), 0.0).journey
    assert journey is not None and journey.tasks
    return journey


def sent(effects: tuple[fx.Effect, ...]) -> list[str]:
    return [e.text for e in effects if isinstance(e, fx.Send)]


def test_the_participant_is_told_between_two_systems_before_the_next_brief() -> None:
    within = bundle()
    journey = in_first_task(within)
    first, second = (t.system_id for t in journey.tasks)
    assert first != second
    done = step(within, "p1", journey, ev.DoneCommand(), 1.0)
    texts = sent(done.effects)
    told = next(i for i, t in enumerate(texts) if t.startswith(CHANGED))
    assert texts[told - 1] == "This task is over."
    assert texts[told + 1].startswith("Your task: Task")
    [changed] = [
        e
        for e in done.effects
        if isinstance(e, fx.RecordEvent) and e.kind is EventKind.SYSTEM_CHANGED
    ]
    assert changed.data == {"from": first, "to": second}
    assert done.journey is not None and changed.session_id == done.journey.session_id


def test_in_the_study_s_words_and_language() -> None:
    own = bundle(system_changed="Meet the other assistant.")
    texts = sent(step(own, "p1", in_first_task(own), ev.DoneCommand(), 1.0).effects)
    assert "Meet the other assistant." in texts
    within = bundle()
    texts = sent(step(within, "p1", in_first_task(within, "it"), ev.DoneCommand(), 1.0).effects)
    assert "Ora parli con un altro assistente." in texts


def test_no_word_when_the_system_stays_the_same() -> None:
    within = bundle()
    journey = in_first_task(within)
    same = journey.evolve(tasks=(journey.tasks[0], Task("two", journey.tasks[0].system_id)))
    texts = sent(step(within, "p1", same, ev.DoneCommand(), 1.0).effects)
    assert not [t for t in texts if t.startswith(CHANGED)]


def test_a_held_reply_of_the_first_system_never_reaches_the_second_task() -> None:
    within = bundle()
    journey = in_first_task(within)
    journey = step(within, "p1", journey, ev.TextReceived("hi"), 1.0).journey
    assert journey is not None
    gated = journey.evolve(gated=True, gate_auto_send=5.0)
    held = step(within, "p1", gated, ev.SystemReplied(SystemReply(("Old reply",)), 3.0), 2.0)
    assert held.journey is not None and held.journey.waiting is not None
    done = step(within, "p1", held.journey, ev.DoneCommand(), 3.0)
    assert done.journey is not None and done.journey.waiting is None
    later = step(within, "p1", done.journey, ev.Tick(), 100.0)
    assert "Old reply" not in sent(later.effects)


class Buttons:
    """A system that offers buttons under every reply, saying which system it is."""

    def __init__(self, name: str) -> None:
        self.name = name

    async def respond(self, conversation: Conversation) -> SystemReply:
        return SystemReply((f"{self.name} here",), buttons=(("Yes", "yes"), ("No", "no")))

    async def close(self) -> None:
        """Nothing to release."""


@pytest.mark.slow
async def test_on_the_emulator_the_first_system_s_buttons_are_gone_before_the_second(
    emulator: BotApiEmulator, start_bot: StartBot
) -> None:
    within = bundle()
    systems = {"first": Buttons("first"), "second": Buttons("second")}
    bot = await start_bot(within, systems=systems)
    p = emulator.participant(4242)
    await p.send_text("/start")
    await p.wait_for_text("Privacy agreement")
    await p.tap(text="I agree")
    await p.wait_for_text("Your task")
    await p.send_text("hello")
    offered = await p.wait_for_text(" here")
    assert offered.buttons == ["Yes", "No"]
    first = offered.text.removesuffix(" here")
    await p.send_text("/done")
    told = await p.wait_for_text(CHANGED)
    await p.wait_for(lambda q: q.messages[-1].text.startswith("Your task: Task"))
    assert offered.buttons == []  # taken off before the participant is told
    assert offered.message_id < told.message_id
    await p.send_text("hello again")
    await p.wait_for(
        lambda q: q.messages[-1].text.endswith(" here") and q.messages[-1] is not offered
    )
    second = p.messages[-1].text.removesuffix(" here")
    assert {first, second} == {"first", "second"}
    kinds = [e["kind"] for e in bot.events()]
    assert kinds.count(EventKind.SYSTEM_CHANGED.value) == 1


@pytest.mark.slow
async def test_on_the_emulator_a_held_reply_of_the_first_system_is_gone_for_good(
    emulator: BotApiEmulator, start_bot: StartBot
) -> None:
    within = bundle()
    systems = {"first": Buttons("first"), "second": Buttons("second")}
    bot = await start_bot(within, systems=systems, command_interval=0.05)
    p = emulator.participant(4343)
    await p.send_text("/start")
    await p.wait_for_text("Privacy agreement")
    await p.tap(text="I agree")
    await p.wait_for_text("Your task")
    [session] = await until(lambda: bot.sessions())
    first = session["system_id"]
    code, _ = await ozlab_wizard(bot.db, "gate", f"system:{first}", "on")
    assert code == 0
    await p.send_text("hello")
    await until(lambda: bot.events("reply_waiting"))
    await p.send_text("/done")
    await p.wait_for_text(CHANGED)
    code, said = await ozlab_wizard(bot.db, "reply", session["session_id"], "--approve")
    assert code != 0, said  # nothing is waiting any more: the held reply went with its task
    assert [c["outcome"] for c in command_log(bot.db) if c["kind"] == "reply"] == ["expired"]
    await p.send_text("hello again")
    await p.wait_for(lambda q: q.messages[-1].text.endswith(" here"))
    assert [m.text for m in p.messages if m.text.endswith(" here")] == [
        f"{'second' if first == 'first' else 'first'} here"
    ]
