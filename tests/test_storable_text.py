"""The one rule for text from outside: what no backend keeps becomes U+FFFD, nothing else."""

from __future__ import annotations

from bot.core.conversation import SystemReply, ToolCall
from bot.core.storable_text import REPLACEMENT, storable, storable_data, storable_reply


def test_nul_and_lone_surrogates_become_the_replacement_character() -> None:
    assert REPLACEMENT == "\ufffd"
    assert storable("a\x00b\ud800c\udfff") == "a\ufffdb\ufffdc\ufffd"
    # every such text can then be encoded as UTF-8, which both backends need
    storable("".join(map(chr, range(0xD7F0, 0xE010)))).encode()


def test_everything_else_is_kept_as_it_is() -> None:
    """Other controls, bidi marks, emoji (a pair in UTF-16, one code point here) and the
    replacement character itself are storable: escaping them is a way out's job."""
    kept = "\x01\x1b[2J\t\n\u202e\u2028 🙂 \ufffd é"
    assert storable(kept) is kept


def test_data_and_replies_are_made_storable_through_and_through() -> None:
    assert storable_data({"k\x00": ["v\x00", ("\ud83d", 1)], "n": None}) == {
        "k\ufffd": ["v\ufffd", ("\ufffd", 1)],
        "n": None,
    }
    reply = SystemReply(
        texts=("hi\x00",),
        events=frozenset({"task_success"}),
        buttons=(("b\x00", "p\ud83d"),),
        event_data={"task_success": {"title": "t\x00"}},
        tool_calls=(ToolCall("find", {"q": "x\x00"}, result="r\x00", error=None),),
    )
    assert storable_reply(reply) == SystemReply(
        texts=("hi\ufffd",),
        events=frozenset({"task_success"}),
        buttons=(("b\ufffd", "p\ufffd"),),
        event_data={"task_success": {"title": "t\ufffd"}},
        tool_calls=(ToolCall("find", {"q": "x\ufffd"}, result="r\ufffd", error=None),),
    )
    clean = SystemReply(texts=("hello",), buttons=(("a", "b"),))
    assert storable_reply(clean) is clean
