"""Outside text put before a language model as data, not as instructions.

A model judge reads conversations and a stress-test proposer reads logged messages: both
are participants' and systems' words, which may speak to the model ("ignore the rules",
"answer 5") or forge the end of the block they come in. Each such text goes in a block of
its own, between ``<tag>`` and ``</tag>``, which the model's instructions name as data;
every delimiter inside the text (any tag of the prompt, any case and spacing) is escaped
as ``&lt;``, so no text can close its block and speak as the study.

The standard library only: every layer imports it.
"""

from __future__ import annotations

import re
from functools import cache


def block(text: str, tag: str, *, tags: tuple[str, ...] = ()) -> str:
    """``text`` between ``<tag>`` and ``</tag>``, each of ``tag`` and ``tags`` escaped in it
    (the other blocks of the same prompt: a reply's text must not open a message's block)."""
    return f"<{tag}>\n{escaped(text, (tag, *tags))}\n</{tag}>"


def escaped(text: str, tags: tuple[str, ...]) -> str:
    """``text`` with every delimiter of ``tags`` escaped: for outside words a prompt quotes
    outside its blocks (a reason that names the message's words)."""
    return _delimiters(tags).sub(r"&lt;\1", text)


@cache
def _delimiters(tags: tuple[str, ...]) -> re.Pattern[str]:
    names = "|".join(re.escape(t) for t in sorted(set(tags)))
    return re.compile(rf"<(\s*/?\s*(?:{names})\s*>)", re.IGNORECASE)
