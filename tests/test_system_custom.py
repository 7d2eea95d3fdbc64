"""Custom adapter classes named in the study file (``type: python``)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from bot.core.conversation import Conversation, SystemReply
from bot.core.errors import SystemSetupError
from bot.systems.custom import load_custom
from bot.systems.examples.echo import Echo
from bot.systems.registry import build_systems, close_systems
from scenarios.systems import PythonSystem


def spec(entry: str, **options: Any) -> PythonSystem:
    return PythonSystem(type="python", id="mine", entry=entry, options=options)


def conversation(message: str) -> Conversation:
    return Conversation("s", "hmd-gift", "brief", (), message)


async def test_the_example_echo_loads_with_its_options() -> None:
    system = load_custom(spec("bot.systems.examples.echo:Echo", prefix="> "))
    assert isinstance(system, Echo)
    assert await system.respond(conversation("hello")) == SystemReply(texts=("> hello",))
    bye = await system.respond(conversation("bye"))
    assert bye.events == {"end_dialogue"}
    await system.close()


async def test_through_the_registry() -> None:
    systems = build_systems([spec("bot.systems.examples.echo:Echo")], env={})
    assert (await systems["mine"].respond(conversation("hi"))).texts == ("You said: hi",)
    await close_systems(systems)


@pytest.fixture
def modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder on sys.path holding small adapter modules, some of them broken."""
    sources = {
        "ozt_sync.py": """
            class Sync:
                def respond(self, conversation):
                    return None
                async def close(self):
                    pass
        """,
        "ozt_noclose.py": """
            class NoClose:
                async def respond(self, conversation):
                    return None
        """,
        "ozt_picky.py": """
            class Picky:
                def __init__(self, model):
                    raise RuntimeError(f"cannot load model {model}")
                async def respond(self, conversation):
                    return None
                async def close(self):
                    pass
        """,
        "ozt_needs.py": """
            import ozt_not_installed_anywhere

            class Needs:
                pass
        """,
        "ozt_broken.py": """
            def oops(:
        """,
        "ozt_value.py": """
            Thing = 42
        """,
    }
    for name, source in sources.items():
        (tmp_path / name).write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


@pytest.mark.parametrize(
    ("entry", "options", "expected"),
    [
        ("ozt_missing.adapter:Bot", {}, "there is no module 'ozt_missing'"),
        ("bot.systems.examples.nothing:Bot", {}, "no module 'bot.systems.examples.nothing'"),
        ("ozt_needs:Needs", {}, "importing 'ozt_needs:Needs' failed: No module named"),
        ("ozt_broken:Thing", {}, "importing 'ozt_broken:Thing' failed: SyntaxError"),
        ("bot.systems.examples.echo:Parrot", {}, "has no 'Parrot'"),
        ("ozt_value:Thing", {}, "is not a class"),
        ("bot.systems.examples.echo:Echo", {"volume": 3}, "options \\['volume'\\] failed"),
        ("bot.systems.examples.echo:Echo", {"prefix": 3}, "prefix must be a string"),
        ("ozt_picky:Picky", {"model": "big"}, "RuntimeError: cannot load model big"),
        ("ozt_sync:Sync", {}, "not async: respond$"),
        ("ozt_noclose:NoClose", {}, "not async: close$"),
    ],
)
def test_clear_errors_name_the_entry(
    modules: Path, entry: str, options: dict[str, Any], expected: str
) -> None:
    with pytest.raises(SystemSetupError, match=expected) as caught:
        load_custom(spec(entry, **options))
    assert str(caught.value).startswith("system 'mine': ")
    assert entry.split(":")[0] in str(caught.value)
