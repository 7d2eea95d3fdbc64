"""IDIAL in Italian, end to end: a participant whose Telegram is set to Italian goes through
the shipped study (consent, three tasks, the questionnaire, thanks) through the real bot and
the emulator, and no English sentence of the bot reaches them."""

from __future__ import annotations

import pytest

from bot.pilot.emulator import BotApiEmulator
from bot.pilot.emulator.chat import BotMessage
from scenarios.loading import load_study
from scenarios.sentences import catalogue
from tests.conftest import StartBot, say

pytestmark = pytest.mark.slow

ITALIAN_STATEMENTS = (
    "Il sistema è stato efficiente nello svolgere il compito.",
    "Il sistema ha fornito rapidamente tutte le informazioni di cui avevo bisogno.",
    "Il sistema è facile da usare.",
    "Il sistema è stato incoerente quando ho interagito usando un input non standard o inatteso.",
    "Il sistema ha un dialogo fluido.",
    "Il sistema è stato flessibile rispetto alle mie esigenze.",
    "Sono soddisfatto/a della mia esperienza.",
    "Consiglierei il sistema.",
    "Il sistema è affascinante.",
    "Mi è piaciuto il tempo che ho trascorso usando il sistema.",
)
SCALE = ["0 · Mai", "1 · Raramente", "2 · A volte", "3 · Spesso", "4 · Sempre"]


def _labels(message: BotMessage) -> list[str]:
    return [label for row in message.keyboard for label, _ in row]


async def test_an_italian_participant_gets_the_whole_idial_study_in_italian(
    emulator: BotApiEmulator, start_bot: StartBot
) -> None:
    bundle = load_study("idial")
    bot = await start_bot(bundle)
    it = catalogue("it")
    p = emulator.participant(2601, language_code="it")
    seen: list[str] = []  # every text the bot showed, each version of an edited message
    buttons: list[str] = []

    def saw(message: BotMessage) -> BotMessage:
        seen.append(message.text)
        buttons.extend(_labels(message))
        return message

    await p.send_text("/start")
    saw(await p.wait_for_text("Ciao, e grazie per aiutarci"))
    agreement = saw(await p.wait_for_text("Prima di iniziare"))
    assert _labels(agreement) == ["Accetto", "Non accetto"]
    await p.tap(text="Accetto")

    italian_briefs = {
        scenario.translations["it"].brief: scenario.translations["it"].title
        for scenario in bundle.scenarios.values()
    }
    system_replies: list[str] = []
    for _ in range(3):
        brief = saw(await p.wait_for_text(f"{it['brief_heading']}: "))
        title, body = brief.text.split("\n\n")[0], brief.text.split("\n\n")[1]
        assert body in italian_briefs and title.endswith(italian_briefs[body])
        assert brief.text.endswith(it["brief_footer"])
        assert _labels(brief) == [it["finish_button"]]
        system_replies.append(await say(p, "hello"))  # the demo shop itself speaks English
        await p.tap(text=it["finish_button"])
        saw(await p.wait_for_text(it["task_over"]))

    intro = bundle.questionnaire_in("idial", "it").intro
    frame = saw(await p.wait_for_text("Grazie, era l'ultimo compito!"))
    assert (
        frame.text
        == f"Grazie, era l'ultimo compito! Ora alcune domande sull'assistente.\n\n{intro}"
    )
    for number, statement in enumerate(ITALIAN_STATEMENTS, start=1):
        item = saw(await p.wait_for_text(f"Questionario IDIAL · {number}/10"))
        assert item.text == f"Questionario IDIAL · {number}/10\n\n{statement}"
        assert _labels(item) == SCALE
        await p.tap(text="3 · Spesso")
        await p.wait_for_toast("Spesso")
    saw(await p.wait_for_text(it["thanks"]))
    seen += [m.text for m in p.messages if m.text not in system_replies]
    for message in p.messages:
        buttons.extend(_labels(message))

    english = set(catalogue("en").values())
    english |= {v for v in bundle.study.texts.model_dump().values() if isinstance(v, str)}
    for scenario in bundle.scenarios.values():
        english |= {scenario.title, scenario.brief}
    questionnaire = bundle.questionnaire("idial")
    english |= {questionnaire.title, questionnaire.intro or ""}
    for statement in questionnaire.items:
        english.add(statement.text)
        english |= set(getattr(statement, "labels", {}).values())
    english -= set(it.values())  # a word both languages share would prove nothing
    leaked = sorted(e for e in english for text in seen + buttons + p.toasts if e and e in text)
    assert leaked == [], "English reached an Italian participant"

    stored = bot.responses()
    assert [(r["item_id"], r["value"], r["label"]) for r in stored] == [
        (f"idial.s{n}", 3, "Spesso") for n in range(1, 11)
    ]
