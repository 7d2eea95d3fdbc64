"""Message text as Telegram validates it: parse modes, entities, length.

The emulator must reject what Telegram rejects, otherwise a bot that passes its tests fails
in a study: an unbalanced ``*`` with ``parse_mode="Markdown"``, a stray ``<`` in HTML, a text
over 4096 characters after entity parsing. The parsers below
return the plain text and entities (offsets in UTF-16 code units, as in the Bot API); their
error descriptions follow Telegram's wording but are not guaranteed byte-identical.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from bot.pilot.emulator.wire import ApiError, bad_request

__all__ = ["MAX_TEXT_LENGTH", "ParsedText", "parse_text", "utf16_len"]

MAX_TEXT_LENGTH = 4096


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units: Telegram's unit for entity offsets and text limits."""
    return len(text.encode("utf-16-le")) // 2


@dataclass(frozen=True, slots=True)
class ParsedText:
    """Text as Telegram stores it after entity parsing."""

    text: str
    entities: list[dict[str, Any]]


class _Builder:
    """Accumulates plain text and entities while tracking the UTF-16 position."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.pos = 0
        self.entities: list[dict[str, Any]] = []

    def add(self, text: str) -> None:
        if text:
            self.parts.append(text)
            self.pos += utf16_len(text)

    def entity(self, kind: str, start: int, **extra: Any) -> None:
        if self.pos > start:
            self.entities.append(
                {"type": kind, "offset": start, "length": self.pos - start, **extra}
            )

    def result(self) -> ParsedText:
        self.entities.sort(key=lambda e: (e["offset"], -e["length"]))
        return ParsedText("".join(self.parts), self.entities)


def _parse_error(detail: str) -> ApiError:
    return bad_request(f"can't parse entities: {detail}")


def _byte_offset(text: str, index: int) -> int:
    return len(text[:index].encode())


# --------------------------------------------------------------------------- HTML

_HTML_TAGS = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "span": "spoiler",
    "tg-spoiler": "spoiler",
    "a": "text_link",
    "code": "code",
    "pre": "pre",
    "blockquote": "blockquote",
    "tg-emoji": "custom_emoji",
}
_HTML_ENTITY = re.compile(r"&(lt|gt|amp|quot|#[0-9]{1,7}|#x[0-9a-fA-F]{1,6});")
_HTML_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_HTML_TAG_NAME_END = re.compile(r"[\s>]")  # tdlib reads a tag name up to whitespace or ">"
_HTML_ATTR = re.compile(r"""([A-Za-z-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")
_HTML_PLAIN = re.compile(r"[^<&]+")


def _html_unescape(match: re.Match[str]) -> str:
    name = match.group(1)
    if name in _HTML_NAMED:
        return _HTML_NAMED[name]
    code = int(name[2:], 16) if name[1] in "xX" else int(name[1:])
    return chr(code) if 0 < code <= 0x10FFFF else match.group(0)


def _parse_html(text: str) -> ParsedText:
    out = _Builder()
    stack: list[tuple[str, int, dict[str, str]]] = []
    i, n = 0, len(text)
    while i < n:
        plain = _HTML_PLAIN.match(text, i)
        if plain:
            out.add(plain.group(0))
            i = plain.end()
            continue
        if text[i] == "&":
            ent = _HTML_ENTITY.match(text, i)
            out.add(_html_unescape(ent) if ent else "&")
            i = ent.end() if ent else i + 1
            continue
        offset = _byte_offset(text, i)
        after_name = _HTML_TAG_NAME_END.search(text, i + 1)
        name_end = after_name.start() if after_name else n
        is_end_tag = text.startswith("/", i + 1)
        unclosed = _parse_error(
            f"Unclosed {'end' if is_end_tag else 'start'} tag at byte offset {offset}"
        )
        if name_end >= n:
            raise unclosed
        name = text[i + 1 : name_end].lower()
        if not is_end_tag and name not in _HTML_TAGS:
            raise _parse_error(f'Unsupported start tag "{name}" at byte offset {offset}')
        close = text.find(">", name_end)
        if close < 0:
            raise unclosed
        inner = text[i + 1 : close]
        if inner.startswith("/"):
            name = inner[1:].strip().lower()
            if not stack:
                raise _parse_error(f"Unexpected end tag at byte offset {offset}")
            tag, start, attrs = stack.pop()
            if name and name != tag:
                raise _parse_error(
                    f"Unmatched end tag at byte offset {offset}, "
                    f'expected "</{tag}>", found "</{name}>"'
                )
            kind = _HTML_TAGS[tag]
            if kind == "text_link":
                if "href" in attrs:
                    out.entity(kind, start, url=attrs["href"])
            elif kind == "pre" and "language" in attrs:
                out.entity(kind, start, language=attrs["language"])
            elif kind == "code" and stack and stack[-1][0] == "pre":
                pass  # <pre><code class="language-x"> is one pre entity with a language
            elif kind == "custom_emoji":
                out.entity(kind, start, custom_emoji_id=attrs.get("emoji-id", ""))
            else:
                out.entity(kind, start)
        else:
            attrs = {
                m.group(1).lower(): next(g for g in m.groups()[1:] if g is not None)
                for m in _HTML_ATTR.finditer(inner, len(name))
            }
            if name == "span" and attrs.get("class") != "tg-spoiler":
                raise _parse_error(
                    f'Tag "span" must have class "tg-spoiler" at byte offset {offset}'
                )
            if name == "code" and stack and stack[-1][0] == "pre":
                language = attrs.get("class", "").removeprefix("language-")
                if language:
                    stack[-1][2]["language"] = language
            stack.append((name, out.pos, attrs))
        i = close + 1
    if stack:
        raise _parse_error(f'Can\'t find end tag corresponding to start tag "{stack[-1][0]}"')
    return out.result()


# --------------------------------------------------------------------------- MarkdownV2

_MD2_RESERVED = frozenset("_*[]()~`>#+-=|{}.!")
_MD2_NAMES = {
    "bold": "Bold",
    "italic": "Italic",
    "underline": "Underline",
    "strikethrough": "Strikethrough",
    "spoiler": "Spoiler",
    "text_link": "TextUrl",
    "code": "Code",
    "pre": "Pre",
}


def _md2_find(text: str, marker: str, start: int) -> int:
    """Index of the next unescaped ``marker`` at or after ``start``, or -1."""
    i = start
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text.startswith(marker, i):
            return i
        i += 1
    return -1


def _md2_unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text, flags=re.S)


def _parse_markdown_v2(text: str) -> ParsedText:
    out = _Builder()
    stack: list[tuple[str, int, int]] = []  # kind, utf-16 start, index in source
    i, n = 0, len(text)
    quote_start: int | None = None

    def missing_end(kind: str, index: int) -> ApiError:
        return _parse_error(
            f"Can't find end of {_MD2_NAMES[kind]} entity "
            f"at byte offset {_byte_offset(text, index)}"
        )

    def toggle(kind: str, index: int) -> None:
        if stack and stack[-1][0] == kind:
            _, start, _ = stack.pop()
            out.entity(kind, start)
        elif any(entry[0] == kind for entry in stack):
            raise missing_end(stack[-1][0], stack[-1][2])
        else:
            stack.append((kind, out.pos, index))

    while i < n:
        c = text[i]
        if c == "\n" and quote_start is not None:
            out.entity("blockquote", quote_start)
            quote_start = None
        if c == "\\":
            if i + 1 < n and 0 < ord(text[i + 1]) <= 126:
                out.add(text[i + 1])
                i += 2
                continue
            out.add(c)  # not before an ASCII character: a literal backslash, as in tdlib
            i += 1
            continue
        if c == "`":
            fence = "```" if text.startswith("```", i) else "`"
            end = _md2_find(text, fence, i + len(fence))
            if end < 0:
                raise missing_end("pre" if fence == "```" else "code", i)
            body = text[i + len(fence) : end]
            start = out.pos
            if fence == "```":
                language, newline, rest = body.partition("\n")
                if newline and re.fullmatch(r"[\w+#-]*", language):
                    body = rest
                else:
                    language = ""
                out.add(_md2_unescape(body))
                out.entity("pre", start, **({"language": language} if language else {}))
            else:
                out.add(_md2_unescape(body))
                out.entity("code", start)
            i = end + len(fence)
            continue
        if c == "*":
            toggle("bold", i)
        elif c == "~":
            toggle("strikethrough", i)
        elif c == "_" and text.startswith("__", i):
            toggle("underline", i)
            i += 1
        elif c == "_":
            toggle("italic", i)
        elif c == "|" and text.startswith("||", i):
            toggle("spoiler", i)
            i += 1
        elif c == "[":
            stack.append(("text_link", out.pos, i))
        elif c == "]" and stack and stack[-1][0] == "text_link":
            kind, start, opened = stack.pop()
            if not text.startswith("(", i + 1):
                raise missing_end(kind, opened)
            end = _md2_find(text, ")", i + 2)
            if end < 0:
                raise missing_end(kind, opened)
            out.entity(kind, start, url=_md2_unescape(text[i + 2 : end]))
            i = end
        elif c == ">" and (i == 0 or text[i - 1] == "\n"):
            quote_start = out.pos
        elif c in _MD2_RESERVED:
            raise _parse_error(
                f"Character '{c}' is reserved and must be escaped with the preceding '\\'"
            )
        else:
            out.add(c)
        i += 1
    if stack:
        raise missing_end(stack[-1][0], stack[-1][2])
    if quote_start is not None:
        out.entity("blockquote", quote_start)
    return out.result()


# --------------------------------------------------------------------------- Markdown (legacy)

_MD_LINK = re.compile(r"\[([^\]]*)\]\(([^)]*)\)")


def _parse_markdown(text: str) -> ParsedText:
    out = _Builder()
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] in "_*`[":
            out.add(text[i + 1])
            i += 2
            continue
        if c in "*_`[":
            marker = "```" if text.startswith("```", i) else c
            if marker == "[":
                link = _MD_LINK.match(text, i)
                if link:
                    start = out.pos
                    out.add(link.group(1))
                    out.entity("text_link", start, url=link.group(2))
                    i = link.end()
                    continue
                if text.find("]", i + 1) >= 0:
                    out.add(c)
                    i += 1
                    continue
            end = text.find("]" if marker == "[" else marker, i + len(marker))
            if end < 0:
                raise _parse_error(
                    f"Can't find end of the entity starting at byte offset {_byte_offset(text, i)}"
                )
            kind = {"*": "bold", "_": "italic", "`": "code", "```": "pre"}[marker]
            start = out.pos
            out.add(text[i + len(marker) : end])
            out.entity(kind, start)
            i = end + len(marker)
            continue
        out.add(c)
        i += 1
    return out.result()


_PARSERS = {"html": _parse_html, "markdownv2": _parse_markdown_v2, "markdown": _parse_markdown}


def parse_text(
    text: Any,
    parse_mode: str | None,
    entities: Any = None,
    *,
    limit: int = MAX_TEXT_LENGTH,
) -> ParsedText:
    """Validate a message text as ``sendMessage``/``editMessageText`` do and parse it."""
    if not isinstance(text, str) or not text:
        raise bad_request("message text is empty")
    if entities is not None:
        if not isinstance(entities, list):
            raise bad_request("can't parse entities JSON object")
        parsed = ParsedText(text, list(entities))
    elif parse_mode:
        parser = _PARSERS.get(parse_mode.lower())
        if parser is None:
            raise bad_request(f"unsupported parse_mode {parse_mode!r}")
        parsed = parser(text)
    else:
        parsed = ParsedText(text, [])
    if not parsed.text.strip():
        raise bad_request("message text is empty")
    if utf16_len(parsed.text) > limit:
        raise bad_request("message is too long")
    return parsed
