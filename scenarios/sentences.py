"""The bot's default sentences, one YAML file per language in ``scenarios/texts/``.

A language is a file (``en.yaml``, ``it.yaml``) rather than code, so that adding one is
copying a file and translating it. English is the source: ``Texts`` takes its defaults from
``en.yaml``; a participant in another language gets that language's file where the study
offers the language, and a study's own ``texts`` and ``translations`` still win.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable
from types import MappingProxyType

import yaml

SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader where PyYAML was built with it (its wheels are): the English file
is read whenever the study models are imported, which took the Python loader 11 ms, every
command that reads a study."""
SOURCE = "en"
"""The language every other file translates, and the one ``Texts`` defaults come from."""


def _folder() -> Traversable:
    return files("scenarios") / "texts"


@cache
def languages() -> tuple[str, ...]:
    """The languages ozlab ships default sentences for, the source first."""
    found = sorted(
        entry.name.removesuffix(".yaml")
        for entry in _folder().iterdir()
        if entry.name.endswith(".yaml") and entry.is_file()
    )
    return (SOURCE, *(code for code in found if code != SOURCE))


@cache
def catalogue(language: str) -> Mapping[str, str]:
    """Sentence key → sentence in ``language``; empty when ozlab has no file for it."""
    if language not in languages():
        return MappingProxyType({})
    text = (_folder() / f"{language}.yaml").read_text(encoding="utf-8")
    data = yaml.load(text, Loader=SAFE_LOADER) or {}
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        raise ValueError(f"scenarios/texts/{language}.yaml must map sentence keys to text")
    return MappingProxyType(data)


def code_of(language: str | None) -> str:
    """The part of a Telegram language tag that picks texts: "en-GB" → "en", None → ""."""
    return (language or "").split("-")[0].lower()
