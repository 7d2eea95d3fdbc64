"""Message analysis for the demo shop: tolerant keyword spotting, prices and game references.

Everything here is a pure function of the message text, so :func:`analyse` is memoised: the
shop replays the whole history on every call and must stay far below a millisecond per turn.
Misspellings are tolerated with a small edit distance (one edit for short words, two for long
ones), looked up through a symmetric-deletion index so that even unseen words are cheap.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from bot.systems.demo.catalogue import CATALOGUE

MAX_CHARS = 1000
"""Only the start of a message is read: nobody types a shopping request longer than this."""
MAX_TOKENS = 60

# Surface words (and merged phrases) for each label the shop reasons about.
_GROUPS: dict[str, tuple[str, ...]] = {
    "g:adventure": (
        "adventure",
        "adventures",
        "adventurous",
        "adventuring",
        "adv",
        "exploration",
        "pointandclick",
    ),
    "g:action": ("action", "actions"),
    "g:puzzle": ("puzzle", "puzzles", "puzzler", "riddles", "logic"),
    "g:strategy": ("strategy", "strategic", "strategies", "tactical", "rts"),
    "g:rpg": ("rpg", "rpgs", "jrpg", "roleplaying", "roleplay"),
    "g:shooter": ("shooter", "shooters", "fps", "shooting"),
    "g:racing": ("racing", "race", "races", "racer", "driving"),
    "g:platformer": ("platformer", "platformers", "platforming"),
    "g:simulation": ("simulation", "simulations", "simulator", "sim", "sims"),
    "g:sports": ("sports", "sport", "football", "soccer", "basketball"),
    "g:horror": ("horror", "scary", "creepy", "spooky"),
    "g:survival": ("survival", "survive"),
    "p:windows": ("windows", "win", "microsoft", "win10", "win11"),
    "p:pc": ("pc", "pcs"),
    "p:mac": ("mac", "macs", "macos", "osx", "apple", "macbook", "imac", "macintosh"),
    "p:linux": ("linux", "lunix", "linus", "ubuntu", "debian", "fedora", "steamos", "steamdeck"),
    "p:playstation": ("playstation", "ps", "ps4", "ps5", "psn", "sony"),
    "p:xbox": ("xbox", "xboxes"),
    "p:switch": ("switch", "nintendo"),
    "search": (
        "search",
        "searching",
        "find",
        "finding",
        "look",
        "looking",
        "seek",
        "seeking",
        "browse",
        "recommend",
        "recommendation",
        "recommendations",
        "suggest",
        "suggestion",
        "suggestions",
        "propose",
        "ideas",
        "idea",
        "options",
        "gift",
        "present",
        "shopping",
    ),
    "show": ("show", "display", "see", "view", "list", "give", "lists"),
    "add": ("add", "ad", "adding", "put", "save", "include", "insert", "place"),
    "weak": ("take", "choose", "pick", "select", "get", "grab", "gowith"),
    "buy": ("buy", "purchase", "order"),
    "compare": (
        "compare",
        "compair",
        "comparing",
        "comparison",
        "versus",
        "vs",
        "difference",
        "differences",
        "differ",
        "against",
    ),
    "better": ("better", "best", "cheaper", "newer", "older", "prefer"),
    "describe": (
        "tell",
        "describe",
        "description",
        "details",
        "detail",
        "info",
        "information",
        "explain",
        "moreabout",
    ),
    "wishlist": ("wishlist", "wishlists", "wishlisted", "wishes"),
    "alex": ("alex", "friend", "friends", "buddy", "pal", "he", "his", "him"),
    "my": ("my", "mine", "myself", "our"),
    "own": ("have", "has", "had", "own", "owns", "owned", "got", "already", "possess", "contains"),
    "pron": ("it", "this", "that", "same"),
    "plural": ("these", "those", "them", "they", "all", "ones", "results", "both", "each"),
    "only": ("only", "just"),
    "anything": ("anything", "whatever", "surprise", "random"),
    "something": ("something", "another", "some", "a", "an"),
    "yes": ("yes", "yeah", "yep", "yup", "ya", "yea", "sure", "definitely", "absolutely", "y"),
    "weakyes": ("ok", "okay", "alright", "fine", "correct", "right", "perfect", "great", "good"),
    "no": ("no", "nope", "nah", "n"),
    "hello": ("hi", "hello", "hey", "hiya", "howdy", "greetings", "yo", "hallo", "hola", "ciao"),
    "thanks": ("thanks", "thank", "thx", "ty", "cheers", "appreciated", "grazie", "merci"),
    "bye": ("bye", "goodbye", "farewell", "cya", "done", "finished", "quit", "exit"),
    "help": ("help", "commands", "capabilities", "features", "instructions"),
    "bound_max": (
        "under",
        "below",
        "less",
        "lessthan",
        "cheaperthan",
        "max",
        "maximum",
        "upto",
        "within",
        "budget",
        "lower",
        "beneath",
    ),
    "bound_min": ("over", "above", "morethan", "atleast", "min", "minimum", "from"),
    "between": ("between",),
    "currency": ("€", "$", "euro", "euros", "eur", "dollar", "dollars", "bucks", "usd"),
    "free": ("free", "freeware", "costless"),
    "sup:price": ("cheapest", "cheap", "inexpensive", "affordable", "lowest"),
    "sup:price_desc": ("priciest", "expensive", "dearest", "highest"),
    "sup:newest": ("newest", "latest", "recent", "newer"),
    "sup:oldest": ("oldest", "classic", "classics"),
    "ord:1": ("first", "1st", "former"),
    "ord:2": ("second", "2nd", "latter"),
    "ord:3": ("third", "3rd"),
    "ord:4": ("fourth", "4th"),
    "ord:5": ("fifth", "5th"),
    "ord:6": ("sixth", "6th"),
    "ord:7": ("seventh", "7th"),
    "ord:8": ("eighth", "8th"),
    "ord:9": ("ninth", "9th"),
    "ord:10": ("tenth", "10th"),
    "ord:-1": ("last", "final"),
    "marker": ("number", "nr", "num", "#", "option", "item", "choice"),
    "title_kw": ("called", "named", "titled", "title", "name"),
    "game": ("game", "games", "titles"),
    "or": ("or",),
    "one": ("one",),
    "the": ("the",),
}

# Spelt-out numbers count only next to a price or after "number" ("number two").
_WORD_NUMBERS: dict[str, int] = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "hundred": 100,
}

# Phrases merged into one token before labelling (longest first).
_PHRASES: dict[tuple[str, ...], str] = {
    ("wish", "list"): "wishlist",
    ("wish", "lists"): "wishlist",
    ("role", "playing"): "roleplaying",
    ("role", "play"): "roleplaying",
    ("steam", "deck"): "steamdeck",
    ("point", "and", "click"): "pointandclick",
    ("point", "click"): "pointandclick",
    ("thank", "you"): "thanks",
    ("see", "you"): "bye",
    ("good", "morning"): "hello",
    ("good", "afternoon"): "hello",
    ("good", "evening"): "hello",
    ("up", "to"): "upto",
    ("at", "most"): "upto",
    ("no", "more", "than"): "upto",
    ("not", "more", "than"): "upto",
    ("at", "least"): "atleast",
    ("more", "than"): "morethan",
    ("less", "than"): "lessthan",
    ("cheaper", "than"): "cheaperthan",
    ("more", "about"): "moreabout",
    ("more", "on"): "moreabout",
    ("more", "info"): "info",
    ("go", "with"): "gowith",
    ("going", "with"): "gowith",
    ("least", "expensive"): "cheapest",
    ("most", "expensive"): "priciest",
    ("lowest", "price"): "cheapest",
    ("most", "recent"): "newest",
    ("free", "to", "play"): "free",
    ("no", "thanks"): "no",
    ("no", "thank"): "no",
    ("not", "really"): "no",
    ("of", "course"): "yes",
    ("go", "ahead"): "yes",
    ("do", "it"): "yes",
    ("please", "do"): "yes",
    ("i", "am", "done"): "done",
    ("that", "is", "all"): "done",
}
_MAX_PHRASE = max(len(k) for k in _PHRASES)

# Frequent words that are never "corrected" into a keyword or a title word.
_COMMON: frozenset[str] = frozenset(
    re.findall(
        r"\w+",
        """
    about above after again also am and are as ask at be been before being both but by can
    could did do does doing for from get gets give go goes going good had has have he her here
    hers him his how i if in into is its just know let like likes liked line lines live lot love
    loves make many may maybe me might much must need needs new nice now of off on once or other
    our out own please plays play player players really said same say says shall she shop store
    should so some such than that the their them then there these they thing things think this
    those though time to too two us use used very want wants was way we well were what when where
    which while who whom why will with would yes you your yours kind kinds sort type types kid
    kids read road done dont don cant sorry hmm well okay cool neat fun funny look looks sound
    sounds seems seem seen does doesnt isnt wasnt also even ever every still about around price
    prices cost costs costing year years release released old cheap machine computer laptop
    gaming gamer gamers running runs run works work working support supports supported available
    birthday christmas someone something anyone anything everyone else there their where whose
    tell told asked answer answers question questions maybe probably think thought choose
    chosen between same other others another either neither next previous before after than
    top most least less more lot lots few little big small great nice lovely awesome amazing
    fine right left wrong correct okay please thanks thank hello hey bye yes no not
    """,
    )
)


def _build_lexicon(groups: dict[str, tuple[str, ...]]) -> dict[str, str]:
    """Surface word -> label; later groups never override earlier ones."""
    lexicon: dict[str, str] = {}
    for label, words in groups.items():
        for word in words:
            lexicon.setdefault(word, label)
    return lexicon


_LEXICON: dict[str, str] = _build_lexicon(_GROUPS)


def edit_distance(a: str, b: str, limit: int = 3) -> int:
    """Optimal-string-alignment distance (a swap of neighbours costs one), capped at ``limit``."""
    if a == b:
        return 0
    if abs(len(a) - len(b)) >= limit:
        return limit
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                value = min(value, previous2[j - 2] + 1)
            current[j] = value
        if min(current) >= limit:
            return limit
        previous2, previous = previous, current
    return min(previous[-1], limit)


def typo_budget(length: int) -> int:
    """How many edits a word of this length may carry and still be recognised."""
    if length < 4:
        return 0
    return 1 if length < 8 else 2


def _deletions(word: str, depth: int) -> set[str]:
    found = {word}
    frontier = {word}
    for _ in range(depth):
        frontier = {w[:i] + w[i + 1 :] for w in frontier for i in range(len(w))}
        found |= frontier
    return found


class FuzzyIndex:
    """Finds the vocabulary word closest to a misspelt one (symmetric deletions, then OSA)."""

    def __init__(self, words: Iterable[str]) -> None:
        vocabulary = sorted({w for w in words if typo_budget(len(w)) > 0})
        buckets: dict[str, list[str]] = {}
        for word in vocabulary:
            for variant in _deletions(word, typo_budget(len(word))):
                buckets.setdefault(variant, []).append(word)
        self._deletes: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in buckets.items()}
        self._longest = max((len(w) for w in vocabulary), default=0)

    def lookup(self, token: str) -> str | None:
        """The closest word within the typo budget (ties: alphabetical), or None."""
        if typo_budget(len(token)) == 0 or len(token) > self._longest + 2:
            return None
        candidates: set[str] = set()
        for variant in _deletions(token, 2 if len(token) >= 6 else 1):
            candidates.update(self._deletes.get(variant, ()))
        best: str | None = None
        best_distance = 99
        for word in sorted(candidates):
            if len(word) <= 4 and len(token) <= 4 and sorted(word) != sorted(token):
                continue  # short words: only swapped letters, or "make" would become "take"
            budget = typo_budget(max(len(word), len(token)))
            distance = edit_distance(token, word, budget + 1)
            if distance <= budget and distance < best_distance:
                best, best_distance = word, distance
        return best


def normalise_title(title: str) -> str:
    """Lower-case words of a title, with the same rules as messages."""
    return " ".join(_tokens(title))


_STOP_TITLE_WORDS = frozenset({"the", "of", "a", "an", "and", "from", "to", "in", "on"})


def _title_keys(title: str) -> tuple[str, ...]:
    return tuple(w for w in _tokens(title) if w not in _STOP_TITLE_WORDS)


_KEYWORD_INDEX = FuzzyIndex(w for w in _LEXICON if w.isalpha())


def _normalise(text: str) -> str:
    text = unicodedata.normalize("NFKD", text[:MAX_CHARS])
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).lower()
    text = text.replace("\u2019", "'").replace("`", "'")
    text = re.sub(r"(\d),(\d{1,2})\b", r"\1.\2", text)
    text = re.sub(r"\bno\.\s*(?=\d)", " number ", text)
    text = re.sub(r"'s\b", "", text)
    text = re.sub(r"n't\b", " not", text)
    return re.sub(r"'(?:ll|re|ve|d|m)\b", "", text)


_TOKEN_RE = re.compile(r"\d+(?:\.\d+)?(?:st|nd|rd|th)?|[^\W\d_]+|[€$#]")


def _tokens(text: str) -> list[str]:
    raw = _TOKEN_RE.findall(_normalise(text))[:MAX_TOKENS]
    merged: list[str] = []
    i = 0
    while i < len(raw):
        for size in range(min(_MAX_PHRASE, len(raw) - i), 1, -1):
            phrase = _PHRASES.get(tuple(raw[i : i + size]))
            if phrase is not None:
                merged.append(phrase)
                i += size
                break
        else:
            merged.append(raw[i])
            i += 1
    return merged


def _build_titles() -> tuple[tuple[tuple[str, ...], ...], dict[str, tuple[int, ...]]]:
    keys = tuple(_title_keys(game.title) for game in CATALOGUE)
    word_games: dict[str, list[int]] = {}
    for index, words in enumerate(keys):
        for word in words:
            word_games.setdefault(word, []).append(index)
    return keys, {w: tuple(g) for w, g in word_games.items()}


_TITLE_KEYS, _TITLE_WORD_GAMES = _build_titles()
_TITLE_INDEX = FuzzyIndex(_TITLE_WORD_GAMES)


@lru_cache(maxsize=8192)
def canonical(token: str, fuzzy: bool = True) -> str:
    """The label of a word (``g:adventure``, ``add``, ``ord:2`` ...) or the word itself;
    ``fuzzy``: a misspelt keyword is recognised too (v1; v0 matches keywords exactly)."""
    label = _LEXICON.get(token)
    if label is not None:
        return label
    ordinal = re.fullmatch(r"(\d+)(?:st|nd|rd|th)", token)
    if ordinal:
        return f"ord:{int(ordinal.group(1))}"
    if token in _COMMON or token in _TITLE_WORD_GAMES or not token.isalpha() or not fuzzy:
        return token
    hit = _KEYWORD_INDEX.lookup(token)
    return _LEXICON[hit] if hit is not None else token


@lru_cache(maxsize=8192)
def _title_word(token: str, fuzzy: bool = True) -> str | None:
    """The catalogue title word a message word stands for, allowing typos in unknown words
    when ``fuzzy``."""
    if token in _TITLE_WORD_GAMES:
        return token
    if token in _LEXICON or token in _COMMON or not token.isalpha() or not fuzzy:
        return None
    return _TITLE_INDEX.lookup(token)


@dataclass(frozen=True)
class Ref:
    """A reference to a game: a position in the last list, a title, or a superlative."""

    position: int
    ordinal: int | None = None
    games: tuple[int, ...] = ()
    superlative: str | None = None


@dataclass(frozen=True)
class Analysis:
    """What the shop needs to know about one message; computed once per distinct text."""

    blank: bool
    labels: frozenset[str]
    genres: tuple[str, ...] = ()
    platforms: tuple[str, ...] = ()
    max_price: float | None = None
    min_price: float | None = None
    sort: str | None = None
    refs: tuple[Ref, ...] = ()
    mention_words: tuple[str, ...] = ()
    explicit_titles: tuple[str, ...] = ()
    wishlist_owner: str | None = None
    greeting: bool = False
    yes: bool = False
    no: bool = False
    help: bool = False
    indefinite: bool = False
    plural_games: bool = False

    def has(self, label: str) -> bool:
        return label in self.labels

    @property
    def has_constraints(self) -> bool:
        """Whether the message says anything a search could filter on."""
        return bool(
            self.genres
            or self.platforms
            or self.max_price is not None
            or self.min_price is not None
            or self.explicit_titles
        )


_HELP_RE = re.compile(
    r"\bwhat (?:can|do|else can) you (?:do|offer)\b|\bwhat can i (?:ask|say|do|type)\b"
    r"|\bhow (?:does|do) (?:this|it|you) work\b|\bhow do i use\b|\bwho are you\b"
    r"|\bwhat are you\b"
)
_EXPLICIT_TITLE_RE = re.compile(
    r"\b(?:called|named|titled)\s+(?:like\s+)?\W*([^\W\d_]{2,})"
    r"|\b([^\W\d_]{2,})\W*\s+in\s+(?:the|its|their)\s+(?:title|name)s?\b"
    r"|\bwith\s+the\s+word\s+\W*([^\W\d_]{2,})"
)


def _number(token: str) -> float | None:
    if re.fullmatch(r"\d+(?:\.\d+)?", token):
        return float(token)
    return float(_WORD_NUMBERS[token]) if token in _WORD_NUMBERS else None


def _mentions(
    words: list[str], fuzzy: bool = True
) -> tuple[list[tuple[int, tuple[int, ...]]], list[str]]:
    """Title mentions as (first position, candidate games), plus the title words matched."""
    matched: dict[int, dict[str, int]] = {}
    for position, token in enumerate(words):
        word = _title_word(token, fuzzy)
        if word is None:
            continue
        for game in _TITLE_WORD_GAMES[word]:
            matched.setdefault(game, {}).setdefault(word, position)
    scored: list[tuple[int, frozenset[int], float]] = []
    for game, hits in matched.items():
        keys = _TITLE_KEYS[game]
        score = sum(len(w) for w in hits) / sum(len(w) for w in keys)
        strong = any(
            len(w) >= 6 and len(_TITLE_WORD_GAMES[w]) == 1 and w not in _COMMON for w in hits
        )
        if score > 0.5 or strong:
            scored.append((game, frozenset(hits.values()), score))
    kept = [
        (game, positions)
        for game, positions, _ in scored
        if not any(positions < other for _, other, _ in scored)
    ]
    groups: dict[frozenset[int], list[int]] = {}
    for game, positions in kept:
        groups.setdefault(positions, []).append(game)
    mentions = sorted((min(p), tuple(sorted(g))) for p, g in groups.items())
    used_words = sorted({w for game, _ in kept for w in matched[game]})
    return mentions, used_words


def _owner_before(labels: list[str], index: int) -> str | None:
    for back in range(index - 1, max(index - 4, -1), -1):
        if labels[back] == "alex":
            return "alex"
        if labels[back] == "my":
            return "mine"
    return None


def _lower_bound(before: list[str], money: bool) -> bool:
    """Whether the words before a number make it a minimum price ("over 10", "between 10")."""
    if "between" in before:
        return money
    return "bound_min" in before and "bound_max" not in before


def _is_list_position(words: list[str], labels: list[str], i: int) -> bool:
    """'the second one', 'second', '3rd': a list position; not 'show me his wishlist first'."""
    if words[i][0].isdigit() or len(words) <= 3:
        return True
    before = labels[i - 1] if i > 0 else ""
    after = words[i + 1] if i + 1 < len(words) else ""
    return before in ("the", "marker", "and", "or") or after in _OBJECT_WORDS | {"of", "option"}


_MONEY_WORDS = frozenset({"price", "priced", "prices", "cost", "costs", "costing", "budget"})
_ARTICLES = frozenset({"a", "an", "some", "any", "another"})
_OBJECT_WORDS = frozenset({"game", "games", "one", "gift", "title", "present"})


def _indefinite(words: list[str], labels: list[str]) -> bool:
    """Whether the message speaks of *a* game rather than a particular one ("add a game")."""
    if any(w in ("something", "anything", "another", "whatever") for w in words):
        return True
    for i, word in enumerate(words):
        if word in _ARTICLES and any(w in _OBJECT_WORDS for w in words[i + 1 : i + 4]):
            return True
        if word == "one" and i > 0 and labels[i - 1] in ("add", "weak", "buy"):
            return True
    return False


@lru_cache(maxsize=8192)
def analyse(message: str, fuzzy: bool = True) -> Analysis:
    """Label a message: intents, constraints, references. Pure and memoised. Without
    ``fuzzy`` (the demo's weaker v0) keywords and titles must be spelt exactly."""
    words = _tokens(message)
    if not words:
        return Analysis(blank=True, labels=frozenset())
    labels = [canonical(w, fuzzy) for w in words]
    label_set = frozenset(labels)
    genres = tuple(dict.fromkeys(lb[2:] for lb in labels if lb.startswith("g:")))
    platforms = tuple(dict.fromkeys(lb[2:] for lb in labels if lb.startswith("p:")))
    if "pc" in platforms:  # "a Linux PC" is a computer, not Windows
        platforms = tuple(p for p in platforms if p != "pc") or ("windows",)

    max_price: float | None = None
    min_price: float | None = None
    number_refs: list[Ref] = []
    money = "currency" in label_set or any(w in _MONEY_WORDS for w in words)
    for i, word in enumerate(words):
        value = _number(word)
        if value is None:
            continue
        before = labels[max(0, i - 3) : i]
        after = labels[i + 1] if i + 1 < len(labels) else ""
        priced = after == "currency" or (i > 0 and labels[i - 1] == "currency")
        marked = i > 0 and labels[i - 1] == "marker"
        if marked and 1 <= value <= 20:
            number_refs.append(Ref(i, ordinal=int(value)))
        elif money and labels[i - 1 : i] == ["and"] and "between" in labels[max(0, i - 5) : i]:
            max_price = value
        elif _lower_bound(before, money):
            min_price = value
        elif "bound_max" in before or priced:
            max_price = value
        elif 1 <= value <= 20 and word.isdigit() and after != "game":
            number_refs.append(Ref(i, ordinal=int(value)))
    if "free" in label_set and max_price is None:
        max_price = 0.0

    sort = next((lb[4:] for lb in labels if lb.startswith("sup:")), None)
    refs: list[Ref] = list(number_refs)
    for i, label in enumerate(labels):
        if label.startswith("ord:") and _is_list_position(words, labels, i):
            refs.append(Ref(i, ordinal=int(label[4:])))
    mentions, mention_words = _mentions(words, fuzzy)
    refs.extend(Ref(position, games=games) for position, games in mentions)
    constrained = bool(genres or platforms or max_price is not None or min_price is not None)
    if sort is not None and not constrained and not mentions:
        refs.append(Ref(labels.index(f"sup:{sort}"), superlative=sort))
    refs.sort(key=lambda r: r.position)

    normalised = _normalise(message)
    found = (next(g for g in m.groups() if g) for m in _EXPLICIT_TITLE_RE.finditer(normalised))
    explicit = tuple(
        w for w in dict.fromkeys(found) if canonical(w, fuzzy) not in ("game", "the", "something")
    )

    owner: str | None = None
    if "wishlist" in label_set:
        owner = _owner_before(labels, labels.index("wishlist"))
    elif "list" in words:
        owner = _owner_before(labels, words.index("list"))
        if owner is not None:
            label_set = label_set | {"wishlist"}

    content = [lb for lb in labels if lb not in ("hello", "the")]
    first = content[0] if content else ""
    yes = first == "yes" or (first == "weakyes" and "thanks" not in label_set)
    indefinite = _indefinite(words, labels)

    return Analysis(
        blank=False,
        labels=label_set,
        genres=genres,
        platforms=platforms,
        max_price=max_price,
        min_price=min_price,
        sort=sort,
        refs=tuple(refs),
        mention_words=tuple(mention_words),
        explicit_titles=explicit,
        wishlist_owner=owner,
        greeting="hello" in labels[:3],
        yes=yes,
        no=first == "no" and not number_refs,
        help=("help" in label_set or bool(_HELP_RE.search(normalised))),
        indefinite=indefinite,
        plural_games="games" in words or "titles" in words,
    )
