"""DemoShop: the built-in, rule-based video-game shopping assistant for the HMD gift task.

The shop keeps no state between calls. On every call it replays the participant's earlier
messages through a pure transition function (memoised, so a replay costs a few dictionary
look-ups) and then answers the new one. Same conversation in, same reply out.

``v1`` is the reference system. ``v0`` is the weaker baseline a study compares it with: it
silently drops the platform constraint when searching, never asks for clarification, so
an unclear request makes it guess, and it matches keywords and titles exactly, so a
misspelt word is not understood (v1 forgives a typo or two: the stress tests' spelling
group tells them apart).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Literal

from bot.core.conversation import Conversation, SystemReply
from bot.systems.demo.catalogue import (
    ALEX_WISHLIST,
    CATALOGUE,
    GENRE_NAMES,
    PLATFORM_NAMES,
    Game,
)
from bot.systems.demo.language import MAX_CHARS, Analysis, Ref, analyse, normalise_title

Variant = Literal["v1", "v0"]
TASK_SUCCESS = "task_success"
MAX_LISTED = 10

_ALEX: frozenset[int] = frozenset(i for i, g in enumerate(CATALOGUE) if g.title in ALEX_WISHLIST)
_TITLES: tuple[str, ...] = tuple(normalise_title(g.title) for g in CATALOGUE)

HELLO = (
    "Hello! I am the assistant of this game shop. I can help you find a game, compare games "
    "and manage wishlists. What are you looking for today?"
)
HELP = (
    "I can search for games by genre, platform or price (for example: adventure games for "
    "Linux under €20), tell you about a game, compare games, check Alex's wishlist and add a "
    "game to your wishlist. What would you like to do?"
)
FALLBACK = (
    "I'm sorry, I did not understand that. You can ask me to find games (for example: "
    "adventure games for Linux under €20), to tell you about a game, to compare two games or "
    "to add one to your wishlist."
)
BLANK = "I'm sorry, I can only read text messages. What kind of game are you looking for?"
ERROR = "I'm sorry, something went wrong on my side. Could you say that again, please?"
ASK_SEARCH = (
    "What kind of game are you looking for? You can tell me a genre, a platform or a budget, "
    "for example: adventure games for Linux under €20."
)
ASK_ADD = (
    "Which game would you like to add to your wishlist? You can tell me its title or its "
    "number in the list."
)
ASK_DESCRIBE = (
    "Which game would you like to know more about? You can tell me its title or its number "
    "in the list."
)
ASK_CHECK = (
    "Which game would you like me to check? You can tell me its title or its number in the list."
)
ASK_COMPARE = (
    "Which two games would you like to compare? You can tell me their titles or their numbers "
    "in the list."
)
ANYTHING_ELSE = "Is there anything else I can do for you?"


# --------------------------------------------------------------------------- wording helpers


def _join(items: list[str], word: str = "and") -> str:
    """'A', 'A and B', 'A, B and C': lists read as English, not as Python."""
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} {word} {items[-1]}"


def _money(amount: float) -> str:
    return f"€{amount:.0f}" if amount == int(amount) else f"€{amount:.2f}"


def _price(game: Game) -> str:
    return "free" if game.price == 0 else _money(game.price)


def _genres(game: Game) -> str:
    return _join([GENRE_NAMES[g] for g in game.genres])


def _platforms(game: Game) -> str:
    return _join([PLATFORM_NAMES[p] for p in game.platforms])


def _line(number: int, index: int) -> str:
    game = CATALOGUE[index]
    platforms = ", ".join(PLATFORM_NAMES[p] for p in game.platforms)
    return f"{number}. {game.title}, {_price(game)} ({platforms})"


def _numbered(indices: tuple[int, ...]) -> str:
    return "\n".join(_line(n, i) for n, i in enumerate(indices, 1))


def _title(index: int) -> str:
    return CATALOGUE[index].title


def _article(phrase: str) -> str:
    return "an" if phrase[:1].lower() in "aeiou" or phrase.startswith("RPG") else "a"


# --------------------------------------------------------------------------- search constraints

_SORT_KEYS: dict[str, Callable[[int], float]] = {
    "price": lambda i: CATALOGUE[i].price,
    "price_desc": lambda i: -CATALOGUE[i].price,
    "newest": lambda i: -CATALOGUE[i].year,
    "oldest": lambda i: CATALOGUE[i].year,
}


@dataclass(frozen=True)
class Constraints:
    """What a search filters on; later requests refine earlier ones slot by slot."""

    genres: tuple[str, ...] = ()
    platforms: tuple[str, ...] = ()
    max_price: float | None = None
    min_price: float | None = None
    titles: tuple[str, ...] = ()
    sort: str | None = None

    @classmethod
    def of(cls, a: Analysis, title_words: tuple[str, ...]) -> Constraints:
        return cls(a.genres, a.platforms, a.max_price, a.min_price, title_words, a.sort)

    def refined_by(self, newer: Constraints) -> Constraints:
        return Constraints(
            newer.genres or self.genres,
            newer.platforms or self.platforms,
            newer.max_price if newer.max_price is not None else self.max_price,
            newer.min_price if newer.min_price is not None else self.min_price,
            newer.titles or self.titles,
            newer.sort or self.sort,
        )

    @property
    def empty(self) -> bool:
        return self == Constraints()

    def matches(self, index: int) -> bool:
        game = CATALOGUE[index]
        return (
            all(g in game.genres for g in self.genres)
            and all(p in game.platforms for p in self.platforms)
            and (self.max_price is None or game.price <= self.max_price)
            and (self.min_price is None or game.price >= self.min_price)
            and all(w in _TITLES[index] for w in self.titles)
        )

    def results(self) -> list[int]:
        found = [i for i in range(len(CATALOGUE)) if self.matches(i)]
        if self.sort in _SORT_KEYS:
            found.sort(key=_SORT_KEYS[self.sort])
        return found

    def phrase(self, count: int) -> str:
        """'adventure games for Linux up to €20', as the shop repeats a request back."""
        words = []
        if self.max_price == 0:
            words.append("free")
        words.extend(_join([GENRE_NAMES[g] for g in self.genres]).split())
        words.append("game" if count == 1 else "games")
        if self.platforms:
            words.append("for " + _join([PLATFORM_NAMES[p] for p in self.platforms]))
        if self.min_price is not None and self.max_price:
            words.append(f"between {_money(self.min_price)} and {_money(self.max_price)}")
        elif self.max_price:
            words.append(f"up to {_money(self.max_price)}")
        elif self.min_price is not None:
            words.append(f"from {_money(self.min_price)}")
        if self.titles:
            quoted = _join([f'"{w}"' for w in self.titles])
            words.append(f"with {quoted} in the title")
        return " ".join(words)


_ORDER_NOTES = {
    "price": "cheapest first",
    "price_desc": "most expensive first",
    "newest": "newest first",
    "oldest": "oldest first",
}


# --------------------------------------------------------------------------- dialogue state


@dataclass(frozen=True)
class _Pending:
    """What the shop last asked or offered, so that a short answer ('yes', '2') makes sense."""

    kind: Literal[
        "search", "add", "describe", "compare", "check", "confirm_add", "offer_add", "offer_search"
    ]
    game: int | None = None


@dataclass(frozen=True)
class _State:
    wishlist: tuple[int, ...] = ()
    listed: tuple[int, ...] = ()
    focus: int | None = None
    pending: _Pending | None = None
    search: Constraints | None = None


@dataclass(frozen=True)
class _Outcome:
    state: _State
    texts: tuple[str, ...]
    success: bool = False


@dataclass(frozen=True)
class _Resolved:
    """A reference after looking at the state: a game, a choice to make, or a bad number."""

    game: int | None = None
    candidates: tuple[int, ...] = ()
    missing: int | None = None


_INITIAL = _State()


class _Turn:
    """One message handled against one state; short-lived, created only on a cache miss."""

    def __init__(self, variant: Variant, state: _State, a: Analysis) -> None:
        self.v1 = variant == "v1"
        self.s = state
        self.a = a
        # "the cheapest one" picks from the last list; with no list it is a sorted search.
        keep_superlatives = bool(state.listed) and not a.has("search")
        self.refs = tuple(r for r in a.refs if r.superlative is None or keep_superlatives)

    # ----------------------------------------------------------------- plumbing

    def say(self, text: str, success: bool = False, **changes: Any) -> _Outcome:
        return _Outcome(replace(self.s, **changes), (text,), success)

    def resolve(self, ref: Ref) -> _Resolved:
        listed = self.s.listed
        if ref.ordinal is not None:
            n = ref.ordinal
            if n == -1 and listed:
                return _Resolved(game=listed[-1])
            if 1 <= n <= len(listed):
                return _Resolved(game=listed[n - 1])
            return _Resolved(missing=n)
        if ref.superlative is not None:
            if not listed:
                return _Resolved()
            return _Resolved(game=min(listed, key=_SORT_KEYS[ref.superlative]))
        in_list = [g for g in ref.games if g in listed]
        if len(ref.games) == 1 or len(in_list) == 1:
            return _Resolved(game=(in_list or list(ref.games))[0])
        return _Resolved(candidates=ref.games)

    def games(self, action: _Pending) -> tuple[list[int], _Outcome | None]:
        """The games the message refers to, or the clarifying question v1 asks instead."""
        found: list[int] = []
        for ref in self.refs:
            r = self.resolve(ref)
            if r.game is not None:
                found.append(r.game)
            elif r.candidates:
                if not self.v1:
                    found.append(r.candidates[0])
                    continue
                text = (
                    f"Did you mean one of these games?\n{_numbered(r.candidates)}\n"
                    "Please tell me the number or the full title."
                )
                return [], self.say(text, listed=r.candidates, focus=None, pending=action)
            elif r.missing is not None:
                if not self.v1:
                    found.append(self.s.listed[0] if self.s.listed else 0)
                    continue
                if not self.s.listed:
                    text = "I have not shown you any games yet. " + ASK_SEARCH
                    return [], self.say(text, pending=_Pending("search"))
                size = len(self.s.listed)
                text = (
                    f"I'm sorry, there is no number {r.missing} in the list; it has {size} "
                    f"{'game' if size == 1 else 'games'}. Which one did you mean?"
                )
                return [], self.say(text, pending=action)
        return list(dict.fromkeys(found)), None

    def guess(self) -> int:
        """What v0 picks when it should have asked: the game in focus or the first listed."""
        if self.s.focus is not None:
            return self.s.focus
        return self.s.listed[0] if self.s.listed else 0

    # ----------------------------------------------------------------- routing

    def outcome(self) -> _Outcome:
        a = self.a
        if a.blank:
            return self.say(BLANK)
        result = self.route()
        if a.greeting and not result.texts[0].startswith("Hello"):
            first = "Hello! " + result.texts[0]
            result = replace(result, texts=(first, *result.texts[1:]))
        return result

    def route(self) -> _Outcome:
        a, s = self.a, self.s
        pending = s.pending.kind if s.pending else None
        constraints = a.has_constraints
        refs = self.refs
        mentions = any(r.games for r in refs)
        title_search = bool(a.explicit_titles) or (
            mentions and a.plural_games and not a.has("describe")
        )
        about_alex = a.wishlist_owner == "alex" or (
            a.has("alex") and a.has("own") and not constraints and not a.has("add")
        )
        if a.has("compare") or (len(refs) >= 2 and (a.has("better") or a.has("or"))):
            return self.compare()
        if a.has("add"):
            return self.add()
        if about_alex:
            return self.check_alex()
        if a.has("wishlist"):
            return self.my_wishlist()
        if a.has("describe") and (refs or not constraints):
            return self.describe()
        if (a.has("weak") or a.has("buy")) and (refs or a.has("pron")):
            return self.add()
        if refs and not title_search and not (constraints and a.plural_games):
            return {"add": self.add, "compare": self.compare, "check": self.check_alex}.get(
                pending or "", self.describe
            )()
        searchish = (
            constraints
            or title_search
            or a.has("search")
            or a.has("show")
            or a.has("buy")
            or (a.has("anything") and pending == "search")
            or (a.plural_games and (a.has("own") or a.has("what") or a.has("which")))
        )
        if searchish:
            return self.search(for_add=pending == "add")
        if a.help:
            return self.say(HELP, pending=None)
        if a.yes:
            return self.yes()
        if a.no:
            return self.no()
        if a.has("thanks"):
            return self.say("You're welcome! " + ANYTHING_ELSE, pending=None)
        if a.has("bye"):
            return self.say("Goodbye, and thank you for visiting the shop!", pending=None)
        if a.greeting:
            return self.say(HELLO)
        return self.say(FALLBACK)

    # ----------------------------------------------------------------- search

    def search(self, for_add: bool = False) -> _Outcome:
        a, s = self.a, self.s
        titles = a.explicit_titles or (a.mention_words if any(r.games for r in self.refs) else ())
        new = Constraints.of(a, titles)
        bare = not (a.genres or titles or a.plural_games or a.has("search") or a.has("show"))
        refine = s.search is not None and (bare or a.has("only") or a.has("plural"))
        wanted = s.search.refined_by(new) if s.search is not None and refine else new
        if not self.v1:
            wanted = replace(wanted, platforms=())
        if wanted.empty and not a.has("anything") and self.v1:
            return self.say(ASK_SEARCH, pending=_Pending("add" if for_add else "search"))
        found = wanted.results()
        if not found:
            text = (
                f"I'm sorry, I could not find any {wanted.phrase(2)}. Would you like to try "
                "another genre, platform or budget?"
            )
            return self.say(text, search=wanted, pending=None)
        shown = tuple(found[:MAX_LISTED])
        if for_add and not self.v1:
            return self.store(shown[0], force=True, listed=shown, search=wanted)
        count = "one" if len(found) == 1 else str(len(found))
        header = f"I found {count} {wanted.phrase(len(found))}"
        if wanted.sort in _ORDER_NOTES:
            header += f", {_ORDER_NOTES[wanted.sort]}"
        if len(found) > len(shown):
            header += f". Here are the first {len(shown)}"
        if for_add:
            question = "Which one would you like to add to your wishlist?"
            pending, focus = _Pending("add"), None
        elif len(shown) == 1:
            question = "Would you like to add it to your wishlist?"
            pending, focus = _Pending("offer_add", shown[0]), shown[0]
        else:
            question = "Would you like to know more about one of them?"
            pending, focus = _Pending("describe"), None
        text = f"{header}:\n{_numbered(shown)}\n{question}"
        return self.say(text, listed=shown, focus=focus, pending=pending, search=wanted)

    # ----------------------------------------------------------------- one game

    def describe(self) -> _Outcome:
        found, question = self.games(_Pending("describe"))
        if question is not None:
            return question
        if not found:
            target = self.implicit_target()
            if target is None:
                if self.v1:
                    return self.say(ASK_DESCRIBE, pending=_Pending("describe"))
                target = self.guess()
            found = [target]
        texts = []
        for index in found[:3]:
            game = CATALOGUE[index]
            cost = "it is free" if game.price == 0 else f"it costs {_money(game.price)}"
            genres = _genres(game)
            verdict = self.verdict(game) if len(found) == 1 else ""
            subject = (
                f"It is {_article(genres)} {genres} game from {game.year}"
                if verdict
                else (f"{game.title} ({game.year}) is {_article(genres)} {genres} game")
            )
            texts.append(
                f"{verdict}{subject} for {_platforms(game)}, and {cost}. {game.description}"
            )
        last = found[min(len(found), 3) - 1]
        if len(found) == 1:
            if last in self.s.wishlist:
                closing, pending = "It is already in your wishlist.", None
            else:
                closing = "Would you like to add it to your wishlist?"
                pending = _Pending("offer_add", last)
        else:
            closing, pending = (
                "Would you like to add one of them to your wishlist?",
                _Pending("add"),
            )
        texts[-1] += " " + closing
        focus = last if len(found) == 1 else None
        listed = self.s.listed if len(found) == 1 else tuple(found[:3])
        state = replace(self.s, focus=focus, pending=pending, listed=listed)
        return _Outcome(state, tuple(texts))

    def verdict(self, game: Game) -> str:
        """A direct answer to 'does X run on Linux?' or 'is X an adventure game?'."""
        a = self.a
        if a.platforms:
            names = _join([PLATFORM_NAMES[p] for p in a.platforms])
            if all(p in game.platforms for p in a.platforms):
                return f"Yes, {game.title} runs on {names}. "
            return f"No, {game.title} does not run on {names}. "
        if a.genres:
            names = _join([GENRE_NAMES[g] for g in a.genres])
            if all(g in game.genres for g in a.genres):
                return f"Yes, {game.title} is {_article(names)} {names} game. "
            return f"No, {game.title} is not {_article(names)} {names} game. "
        return ""

    def implicit_target(self) -> int | None:
        """The game 'it' stands for: the one in focus, or the only one listed."""
        if self.a.indefinite:
            return None
        if self.s.focus is not None:
            return self.s.focus
        return self.s.listed[0] if len(self.s.listed) == 1 else None

    def add(self) -> _Outcome:
        a, s = self.a, self.s
        found, question = self.games(_Pending("add"))
        if question is not None:
            return question
        target = found[0] if found else self.implicit_target()
        if target is None and s.pending is not None and s.pending.game is not None:
            target = s.pending.game if not a.indefinite else None
        if target is None:
            if a.has_constraints:
                return self.search(for_add=True)
            if self.v1:
                return self.say(ASK_ADD, pending=_Pending("add"))
            target = self.guess()
        confirmed = s.pending == _Pending("confirm_add", target)
        return self.store(target, force=confirmed or not self.v1)

    def store(self, target: int, force: bool, **changes: Any) -> _Outcome:
        """Add a game to the participant's wishlist (v1 double-checks games Alex wants)."""
        title = _title(target)
        if target in self.s.wishlist:
            text = f"{title} is already in your wishlist. {ANYTHING_ELSE}"
            return self.say(text, focus=target, pending=None, **changes)
        if target in _ALEX and not force:
            text = (
                f"Please note that {title} is already on Alex's wishlist. Do you still want to "
                "add it to your wishlist?"
            )
            return self.say(text, focus=target, pending=_Pending("confirm_add", target), **changes)
        if self.a.wishlist_owner == "alex":
            text = f"I cannot change Alex's wishlist, so I added {title} to yours. {ANYTHING_ELSE}"
        else:
            text = f"Done! I added {title} to your wishlist. {ANYTHING_ELSE}"
        wishlist = (*self.s.wishlist, target)
        return self.say(text, True, wishlist=wishlist, focus=target, pending=None, **changes)

    # ----------------------------------------------------------------- several games

    def compare(self) -> _Outcome:
        a, s = self.a, self.s
        found, question = self.games(_Pending("compare"))
        if question is not None:
            return question
        if s.pending is not None and s.pending.kind == "compare" and s.pending.game is not None:
            found = [s.pending.game, *(g for g in found if g != s.pending.game)]
        if a.has("pron") and s.focus is not None and len(found) < 2 and s.focus not in found:
            found.insert(0, s.focus)
        if (
            len(found) < 2
            and not found
            and 2 <= len(s.listed) <= 3
            and (a.has("plural") or len(s.listed) == 2)
        ):
            found = list(s.listed)
        if len(found) < 2:
            if self.v1:
                if found:
                    text = f"Which game would you like to compare with {_title(found[0])}?"
                    return self.say(text, pending=_Pending("compare", found[0]))
                return self.say(ASK_COMPARE, pending=_Pending("compare"))
            pool = [*found, *s.listed, *range(len(CATALOGUE))]
            found = list(dict.fromkeys(pool))[:2]
        return self.comparison(tuple(found[:3]))

    def comparison(self, games: tuple[int, ...]) -> _Outcome:
        lines = []
        for n, index in enumerate(games, 1):
            game = CATALOGUE[index]
            lines.append(
                f"{n}. {game.title}: {_price(game)}, {_genres(game)}, {game.year}, "
                f"for {_platforms(game)}."
            )
        items = [CATALOGUE[i] for i in games]
        cheapest = min(items, key=lambda g: g.price)
        newest = max(items, key=lambda g: g.year)
        notes = []
        if len(items) == 2:
            other = items[1] if cheapest is items[0] else items[0]
            older = items[1] if newest is items[0] else items[0]
            gap = round(other.price - cheapest.price, 2)
            if gap > 0 and newest.year > older.year:
                if newest is cheapest:
                    notes.append(f"{cheapest.title} is {_money(gap)} cheaper and newer.")
                else:
                    notes.append(
                        f"{cheapest.title} is {_money(gap)} cheaper, while {newest.title} is newer."
                    )
            elif gap > 0:
                notes.append(f"{cheapest.title} is {_money(gap)} cheaper.")
            elif newest.year > older.year:
                notes.append(f"They cost the same, but {newest.title} is newer.")
            else:
                notes.append("They cost the same and came out in the same year.")
        else:
            notes.append(f"{cheapest.title} is the cheapest and {newest.title} is the newest.")
        shared = [p for p in PLATFORM_NAMES if all(p in g.platforms for g in items)]
        everyone = "Both" if len(items) == 2 else "All of them"
        if shared:
            notes.append(f"{everyone} run on {_join([PLATFORM_NAMES[p] for p in shared])}.")
        else:
            notes.append("They have no platform in common.")
        text = (
            "Here is how they compare:\n" + "\n".join(lines) + "\n" + " ".join(notes) + " "
            "Would you like to add one of them to your wishlist?"
        )
        return self.say(text, listed=games, focus=None, pending=_Pending("add"))

    # ----------------------------------------------------------------- wishlists

    def check_alex(self) -> _Outcome:
        a, s = self.a, self.s
        found, question = self.games(_Pending("check"))
        if question is not None:
            return question
        if not found:
            if a.has("pron") and not a.has("plural"):
                target = self.implicit_target()
                if target is None and s.listed:
                    if self.v1:
                        return self.say(ASK_CHECK, pending=_Pending("check"))
                    target = self.guess()
                found = [target] if target is not None else []
            elif a.has("plural") and s.listed:
                found = list(s.listed)
        if not found:
            return self.show_alex()
        if len(found) == 1:
            title = _title(found[0])
            if found[0] in _ALEX:
                text = (
                    f"Yes, {title} is already on Alex's wishlist. Would you like to look at "
                    "other games?"
                )
                return self.say(text, focus=found[0], pending=_Pending("offer_search"))
            text = (
                f"Good news: {title} is not on Alex's wishlist yet. Would you like to add it "
                "to your wishlist?"
            )
            return self.say(text, focus=found[0], pending=_Pending("offer_add", found[0]))
        on = [_title(g) for g in found if g in _ALEX]
        if not on:
            text = "None of these games is on Alex's wishlist yet."
        elif len(on) == len(found):
            text = "All of these games are already on Alex's wishlist."
        else:
            verb = "is" if len(on) == 1 else "are"
            text = f"{_join(on)} {verb} already on Alex's wishlist; the other games are not."
        if len(on) < len(found):
            text += " Would you like to add one of them to your wishlist?"
            return self.say(text, pending=_Pending("add"))
        return self.say(text + " Would you like to look at other games?", pending=None)

    def show_alex(self) -> _Outcome:
        games = tuple(sorted(_ALEX))
        text = (
            f"Alex's wishlist has {len(games)} games:\n{_numbered(games)}\n"
            "Would you like me to find a game that is not on it yet?"
        )
        return self.say(text, listed=games, focus=None, pending=_Pending("offer_search"))

    def my_wishlist(self) -> _Outcome:
        found, question = self.games(_Pending("describe"))
        if question is not None:
            return question
        mine = self.s.wishlist
        if found:
            title = _title(found[0])
            if found[0] in mine:
                return self.say(f"Yes, {title} is in your wishlist. {ANYTHING_ELSE}")
            text = f"No, {title} is not in your wishlist yet. Would you like to add it?"
            return self.say(text, focus=found[0], pending=_Pending("offer_add", found[0]))
        if not mine:
            text = "Your wishlist is empty at the moment. Would you like me to find a game for you?"
            return self.say(text, pending=_Pending("offer_search"))
        titles = _join([_title(g) for g in mine])
        text = f"You have {titles} in your wishlist. Would you like to search for another game?"
        return self.say(text, pending=_Pending("offer_search"))

    # ----------------------------------------------------------------- short answers

    def yes(self) -> _Outcome:
        pending = self.s.pending
        if pending is None:
            return self.say(
                "Great! What would you like to do next? I can search for games, tell you about "
                "a game or add one to your wishlist."
            )
        if pending.kind in ("offer_add", "confirm_add") and pending.game is not None:
            return self.store(pending.game, force=True)
        if pending.kind == "offer_search":
            if self.s.search is not None:
                return self.search()
            return self.say(ASK_SEARCH, pending=_Pending("search"))
        asks = {
            "add": ASK_ADD,
            "describe": ASK_DESCRIBE,
            "check": ASK_CHECK,
            "compare": ASK_COMPARE,
            "search": ASK_SEARCH,
        }
        return self.say(asks[pending.kind])

    def no(self) -> _Outcome:
        pending = self.s.pending
        if pending is not None and pending.kind in ("offer_add", "confirm_add"):
            text = "Alright, I did not add it. Would you like to look at other games?"
            return self.say(text, pending=_Pending("offer_search"))
        return self.say(f"Alright. {ANYTHING_ELSE}", pending=None)


@lru_cache(maxsize=16384)
def _transition(variant: Variant, state: _State, message: str) -> tuple[_State, SystemReply]:
    """The shop's whole behaviour: pure, hence memoised across calls and conversations."""
    outcome = _Turn(variant, state, analyse(message, fuzzy=variant == "v1")).outcome()
    if not outcome.success:
        return outcome.state, SystemReply(texts=outcome.texts)
    added = CATALOGUE[outcome.state.wishlist[-1]]  # what the task asked for: the game
    game = {"title": added.title, "genres": list(added.genres), "platforms": list(added.platforms)}
    reply = SystemReply(outcome.texts, frozenset({TASK_SUCCESS}), event_data={TASK_SUCCESS: game})
    return outcome.state, reply


class DemoShop:
    """The built-in system under test; safe to share, since it keeps no conversation state."""

    def __init__(self, variant: Variant = "v1") -> None:
        if variant not in ("v1", "v0"):
            raise ValueError(f"unknown DemoShop variant {variant!r}; use 'v1' or 'v0'")
        self.variant: Variant = variant

    async def respond(self, conversation: Conversation) -> SystemReply:
        return self.reply(conversation)

    def reply(self, conversation: Conversation) -> SystemReply:
        """Synchronous core of :meth:`respond`, for benchmarks and simulations."""
        try:
            state = _INITIAL
            for turn in conversation.history:
                state, _ = _transition(self.variant, state, (turn.user or "")[:MAX_CHARS])
            _, reply = _transition(self.variant, state, (conversation.message or "")[:MAX_CHARS])
        except Exception:  # never let a participant see a crash; the texts say sorry instead
            return SystemReply(texts=(ERROR,))
        return reply

    async def close(self) -> None:
        """Nothing to release: the shop holds no connections."""
