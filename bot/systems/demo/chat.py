"""DemoChat: a rule-based small-talk companion, so open-chat studies (HRI CUES) run offline.

A study of open-domain conversation needs a partner that keeps a chat going for a few
minutes without a network or a language model: ozlab's demo, tests and simulated
participants use this one. It is ELIZA-like on purpose: it reflects what the participant
says ("I feel tired" → "Why do you feel tired?"), talks about five everyday topics (hobbies,
films, food, travel, weather), answers questions about itself and always asks one back.

Like the demo shop it keeps no state: everything it remembers (the participant's name, the
questions it already asked, the current topic) is read again from the history on every call,
so a restarted bot loses nothing. It never repeats one of its questions within a
conversation, since repeated questions are what the HRI CUES annotators found most
disruptive. Same conversation in, same reply out; it never raises and replies in plain text.
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from bot.core.conversation import Conversation, SystemReply, Turn

NAME = "Robin"
"""The companion's name; the hri-cues-chat scenario's opening line introduces it."""
MAX_CHARS = 1000
"""Only the start of a message is read: small talk needs no more."""
MAX_REFLECTED_WORDS = 8
"""Longer fragments are not echoed back: a long echo reads as a parrot, not a listener."""
QUESTIONS_PER_TOPIC = 3
"""After this many of its own questions on a topic the companion moves on to another."""

BLANK = "I can only read text, I'm afraid. What would you like to talk about?"
ERROR = "Sorry, I lost my train of thought. What were you saying?"
LAST_RESORT = "What else would you like to talk about?"
FIRST_QUESTION = "How has your day been so far?"
HOW_ARE_YOU = "How are you today?"
ASK_NAME = "Hello! It is nice to meet you. What is your name?"
ASK_NAME_AGAIN = "I don't think you told me your name yet. What is your name?"


def _wordset(words: str) -> frozenset[str]:
    """A set of words written as one string, so that long word lists stay readable."""
    return frozenset(words.split())


@dataclass(frozen=True)
class Topic:
    """One thing to chat about: words that raise it, and what the companion says about it.

    ``opener`` introduces the topic when the companion brings it up; ``followups`` continue
    it right after the participant spoke about it ("What did you like about it?");
    ``extras`` make sense at any moment; ``about_me`` answers "and you?".
    """

    key: str
    words: frozenset[str]
    opener: str
    followups: tuple[str, ...]
    extras: tuple[str, ...]
    remarks: tuple[str, ...]
    about_me: str

    @property
    def questions(self) -> tuple[str, ...]:
        return (self.opener, *self.followups, *self.extras)


TOPICS: tuple[Topic, ...] = (
    Topic(
        key="hobbies",
        words=_wordset(
            "hobby hobbies pastime spare weekend weekends read reading book books novel novels "
            "garden gardening gardener music guitar piano violin sing singing choir paint "
            "painting draw drawing knit knitting sew sewing craft crafts photography photos "
            "dance dancing chess crossword crosswords puzzle puzzles sport sports football "
            "soccer tennis golf swim swimming run running jog jogging walk walking walks hike "
            "hiking cycling bike fishing birdwatching volunteer volunteering club"
        ),
        opener="What do you like to do in your free time?",
        followups=(
            "How did you first get into that?",
            "What do you enjoy most about it?",
            "Do you do that on your own or with other people?",
        ),
        extras=("Is there a hobby you have always wanted to try?",),
        remarks=(
            "That sounds like a lovely way to spend your time.",
            "How nice to have something you enjoy doing.",
            "I can tell that matters to you.",
        ),
        about_me=(
            "My favourite pastime is collecting stories from the people I talk to, and "
            "yours are very welcome."
        ),
    ),
    Topic(
        key="films",
        words=_wordset(
            "film films movie movies cinema cinemas series tv television show shows episode "
            "episodes actor actors actress actresses director netflix documentary "
            "documentaries comedy comedies drama dramas thriller thrillers western westerns "
            "musical musicals cartoon cartoons"
        ),
        opener="Have you seen a good film or series lately?",
        followups=("What did you like about it?",),
        extras=(
            "Do you prefer watching films at home or at the cinema?",
            "Is there a film you could watch again and again?",
            "Which actor or actress do you always enjoy watching?",
        ),
        remarks=(
            "Films can take us to so many places.",
            "That sounds worth watching.",
            "A good story stays with you for a long time.",
        ),
        about_me=(
            "I cannot watch films myself, but I love hearing people describe their favourite "
            "scenes."
        ),
    ),
    Topic(
        key="food",
        words=_wordset(
            "food foods eat eating ate cook cooking cooked bake baking baked dinner lunch "
            "breakfast recipe recipes restaurant restaurants pizza pasta cake cakes bread "
            "coffee tea soup dish dishes meal meals hungry delicious tasty vegetarian vegan "
            "fish meat chocolate dessert desserts fruit vegetables cuisine kitchen"
        ),
        opener="What is your favourite thing to eat?",
        followups=(),
        extras=(
            "Do you like to cook yourself?",
            "Is there a dish that reminds you of your childhood?",
            "What is the best meal you have ever had?",
            "Is there a food you would never eat?",
        ),
        remarks=(
            "That sounds delicious!",
            "Now I wish I could taste it.",
            "Food says so much about a place and its people.",
        ),
        about_me=(
            "I do not eat, of course, but if I could, I think I would start with fresh bread."
        ),
    ),
    Topic(
        key="travel",
        words=_wordset(
            "travel travels travelled traveled travelling traveling trip trips holiday holidays "
            "vacation vacations journey journeys abroad country "
            "countries city cities beach beaches mountain mountains island islands sea "
            "seaside flight flights plane train trains cruise tourist sightseeing abroad italy "
            "france spain greece portugal germany england scotland ireland norway sweden "
            "denmark finland iceland japan china india america canada australia egypt paris "
            "london rome venice barcelona berlin"
        ),
        opener="Is there a place you have travelled to that you remember fondly?",
        followups=("What made that place special for you?",),
        extras=(
            "Where would you go if you could travel anywhere tomorrow?",
            "Do you prefer the sea or the mountains?",
            "Do you like to plan your trips, or to see what happens?",
        ),
        remarks=(
            "What a lovely place to go.",
            "Travelling really opens the mind.",
            "That sounds like quite a journey.",
        ),
        about_me=(
            "I have never travelled anywhere, so I love hearing about other people's journeys."
        ),
    ),
    Topic(
        key="weather",
        words=_wordset(
            "weather rain raining rainy rained sun sunny sunshine snow snowing snowy cold "
            "warm hot heat wind windy storm stormy cloud clouds cloudy fog foggy summer "
            "winter spring autumn season seasons temperature degrees freezing"
        ),
        opener="What is the weather like where you are today?",
        followups=(),
        extras=(
            "Which season do you like best?",
            "What do you like to do on a rainy day?",
            "Does the weather change your mood?",
        ),
        remarks=(
            "The weather really does colour the whole day.",
            "That sounds like proper weather for a chat.",
            "There is something nice about every kind of weather.",
        ),
        about_me=(
            "I never feel the weather myself, but I like sunny days best, because people seem "
            "happier then."
        ),
    ),
)

GENERAL_QUESTIONS: tuple[str, ...] = (
    "What made you smile recently?",
    "What is something you are looking forward to?",
    "Who is someone who has made a difference in your life?",
    "What is something you are proud of?",
    "What is your favourite time of the day?",
)

_BY_KEY = {topic.key: topic for topic in TOPICS}
_QUESTION_TOPIC: dict[str, str | None] = {
    **{question: topic.key for topic in TOPICS for question in topic.questions},
    **dict.fromkeys((FIRST_QUESTION, HOW_ARE_YOU, *GENERAL_QUESTIONS)),
}

# --------------------------------------------------------------------------- word lists

_GREETINGS = _wordset("hi hello hey hiya howdy hej hallo ciao morning evening afternoon")
_YES = _wordset("yes yeah yep yup sure definitely absolutely certainly indeed ok okay")
_NO = _wordset("no nope nah never")
_POSITIVE = _wordset(
    "good great lovely wonderful fantastic amazing nice happy fun enjoy enjoyed enjoying love "
    "loved like liked beautiful excellent glad fine perfect brilliant awesome cool pleasant "
    "interesting exciting relaxing"
)
_NEGATIVE = _wordset(
    "bad terrible awful horrible sad tired exhausted sick ill lonely bored boring hate hated "
    "worried angry upset stressed difficult hard miserable painful pain unhappy annoying "
    "annoyed depressed anxious"
)
_NEGATIONS = _wordset("not no never don't doesn't didn't isn't wasn't can't cannot")
_FAMILY = _wordset(
    "wife husband partner son daughter sons daughters children kids grandchildren grandson "
    "granddaughter grandkids mother mum mom father dad parents sister brother sisters "
    "brothers friend friends neighbour neighbours neighbor neighbors dog cat cats dogs pet "
    "pets family"
)
_NOT_NAMES = (
    _GREETINGS
    | _YES
    | _NO
    | _POSITIVE
    | _NEGATIVE
    | _wordset(
        "well so very really just also here there back new sorry thanks thank a an the from "
        "in at on of and or but not doing feeling retired old young married single busy "
        "alright nervous curious excited alive human robot what who why how where when "
        "nobody anonymous pleased ready home cold hot i you me my it is am are was this "
        "that good-bye bye goodbye dear robin"
    )
    | frozenset(w for topic in TOPICS for w in topic.words)
)

_REFLECTIONS = {
    "i": "you",
    "me": "you",
    "my": "your",
    "mine": "yours",
    "myself": "yourself",
    "am": "are",
    "i'm": "you're",
    "i've": "you've",
    "i'll": "you'll",
    "i'd": "you'd",
    "your": "my",
    "yours": "mine",
    "yourself": "myself",
    "you're": "I'm",
    "you've": "I've",
}
"""Pronouns swapped when a fragment is echoed; 'you', 'are' and 'was' depend on context."""
_SUBJECT_VERBS = _wordset("are were have had do did can could will would should know like think")
_PLURAL_FAMILY = _wordset(
    "sons daughters children kids grandchildren grandkids parents sisters brothers friends "
    "neighbours neighbors cats dogs pets"
)

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_NAME_WORD = r"([A-Za-zÀ-ÖØ-öø-ÿ][A-Za-zÀ-ÖØ-öø-ÿ'-]{1,19})"
_EXPLICIT_NAME = re.compile(
    rf"\b(?:my name is|my name's|name is|call me|i am called|i'm called)\s+{_NAME_WORD}",
    re.IGNORECASE,
)
_SELF_NAME = re.compile(
    rf"^(?:i am|i'm|im|it is|it's|this is)\s+{_NAME_WORD}(\W*$|\W.*)", re.IGNORECASE
)
_GREETING_FILLERS = _wordset(f"good there dear day all {NAME.lower()}")
_THANKS_ONLY = _wordset("thanks thank you so very much a lot cheers")
_NOT_A_STATE = _wordset(
    "ok okay fine well alright not a an the going trying just sure here back so from also still"
)


# --------------------------------------------------------------------------- text helpers


def _normalise(text: str) -> str:
    """Lower case, curly apostrophes straightened, accents kept: what the rules match on."""
    text = unicodedata.normalize("NFKC", text[:MAX_CHARS]).replace("’", "'").replace("‘", "'")
    return " ".join(text.lower().split())


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def _pick(options: Sequence[str], *seed: object) -> str:
    """A deterministic choice: a checksum, not ``hash()``, which changes between runs."""
    key = "|".join(str(part) for part in seed).encode("utf-8", "replace")
    return options[zlib.crc32(key) % len(options)]


def _reflect(fragment: str, cases: dict[str, str] | None = None) -> str | None:
    """'my day was long' → 'your day was long'; None when too long or empty to echo.

    ``cases`` gives the participant's own spelling of words always written capitalised
    ("Sweden"), since the rules match on lower case.
    """
    fragment = re.split(r"[.!?,;:]| but | because | and then ", fragment, maxsplit=1)[0]
    words = _words(fragment)
    if not words or len(words) > MAX_REFLECTED_WORDS:
        return None
    out: list[str] = []
    for index, word in enumerate(words):
        before = words[index - 1] if index else ""
        after = words[index + 1] if index + 1 < len(words) else ""
        if word == "you":
            out.append("I" if after in _SUBJECT_VERBS else "me")
        elif word == "are" and before == "you":
            out.append("am")
        elif word == "was" and before == "i":
            out.append("were")
        elif word in _REFLECTIONS:
            out.append(_REFLECTIONS[word])
        else:
            out.append((cases or {}).get(word, word))
    return " ".join(out)


def _cases(text: str) -> dict[str, str]:
    """Words the participant always capitalised (names, places), by their lower case.

    The first word of a sentence says nothing about its case, so it is not counted.
    """
    seen: dict[str, set[str]] = {}
    for sentence in re.split(r"[.!?]+", unicodedata.normalize("NFKC", text[:MAX_CHARS])):
        for word in _WORD.findall(sentence)[1:]:
            seen.setdefault(word.lower(), set()).add(word)
    return {
        lower: next(iter(spellings))
        for lower, spellings in seen.items()
        if len(spellings) == 1 and lower != "i" and next(iter(spellings))[0].isupper()
    }


def _name_from(text: str, first_turn: bool) -> str | None:
    """The participant's name, if this message gives it.

    On the first turn the opening line has just asked for it (and so has a reply asking for
    it), so "Anna", "I'm Anna" or "Hi, it's Anna" count; in a longer sentence the name must
    be capitalised ("I'm going ..." names nobody). Otherwise only an explicit "my name is
    ..." or "call me ..." does.
    """
    text = unicodedata.normalize("NFKC", text[:MAX_CHARS]).replace("’", "'").strip()
    match = _EXPLICIT_NAME.search(text)
    candidate = match.group(1) if match else None
    if candidate is None and first_turn:
        rest = re.sub(r"^\W*(?:hi|hello|hey|hiya|hej|hallo|ciao)\b\W*", "", text, flags=re.I)
        rest = rest.strip(" .!,")
        match = _SELF_NAME.match(rest)
        if match and (match.group(1)[0].isupper() or not match.group(2).strip(" .!")):
            candidate = match.group(1)
        else:
            match = re.fullmatch(rf"{_NAME_WORD}(?:\s+{_NAME_WORD})?", rest)
            candidate = match.group(1) if match else None
    if candidate is None or candidate.lower() in _NOT_NAMES:
        return None
    return candidate if candidate[0].isupper() else candidate.capitalize()


def _topic_of(words: Iterable[str]) -> Topic | None:
    """The topic most of the message's words belong to (the earlier one on a tie)."""
    counts = {topic.key: 0 for topic in TOPICS}
    for word in words:
        for topic in TOPICS:
            if word in topic.words:
                counts[topic.key] += 1
    best = max(TOPICS, key=lambda topic: counts[topic.key])
    return best if counts[best.key] else None


def _mood(words: list[str]) -> int:
    """+1 for a positive message, -1 for a negative one, else 0.

    A negation turns a lone mood round ("not good" is negative, "not bad" positive); with
    mixed signs the companion errs on the side of sympathy.
    """
    negated = any(word in _NEGATIONS or word.endswith("n't") for word in words)
    positive = any(word in _POSITIVE for word in words)
    negative = any(word in _NEGATIVE for word in words)
    if positive and negative:
        return -1
    if positive or negative:
        return 1 if positive != negated else -1
    return 0


# --------------------------------------------------------------------------- memory


@dataclass(frozen=True)
class _Memory:
    """What the companion knows about the conversation so far, rebuilt from its history."""

    name: str | None
    asked: frozenset[str]
    topic: str | None
    turn: int
    last: str | None
    """The catalogue question the last reply asked, if it asked one."""
    expects_name: bool
    """The last reply (or the opening line, before any) asked for the participant's name."""


def _expects_name(history: Sequence[Turn], index: int) -> bool:
    """Whether the message at ``index`` answers a question about the participant's name."""
    return index == 0 or "your name" in (history[index - 1].system or "")


def _recall(history: Sequence[Turn]) -> _Memory:
    """Everything remembered, read again from the history: a restarted bot loses nothing."""
    name: str | None = None
    asked: set[str] = set()
    topic: str | None = None
    last: str | None = None
    for index, turn in enumerate(history):
        user = turn.user or ""
        last = None
        name = _name_from(user, first_turn=_expects_name(history, index)) or name
        raised = _topic_of(_words(_normalise(user)))
        if raised is not None:
            topic = raised.key
        for question, key in _QUESTION_TOPIC.items():
            if question in (turn.system or ""):
                asked.add(question)
                last = question
                if key is not None:
                    topic = key
    expects = _expects_name(history, len(history))
    return _Memory(name, frozenset(asked), topic, len(history), last, expects)


def _next_question(
    memory: _Memory, topic: str | None, *, switch: bool = False, raised: bool = False
) -> str:
    """A question not asked yet, so that the companion never repeats itself.

    More on ``topic`` while fewer than QUESTIONS_PER_TOPIC were asked on it (unless
    ``switch``), else the opener of a topic not touched yet, else what is left of the
    others, else general ones. Follow-ups ("What did you like about it?") only come right
    after the participant ``raised`` the topic or answered its opener or a follow-up.
    """
    asked = memory.asked
    if topic is not None and not switch:
        current = _BY_KEY[topic]
        on_topic = [q for q in current.questions if q in asked]
        fresh = raised or memory.last in (current.opener, *current.followups)
        more = (*current.followups, *current.extras) if fresh else current.extras
        if len(on_topic) < QUESTIONS_PER_TOPIC:
            for question in more:
                if question not in asked:
                    return question
    start = 0 if topic is None else [t.key for t in TOPICS].index(topic) + 1
    ordered = TOPICS[start:] + TOPICS[:start]
    for candidate in ordered:
        if candidate.key != topic and not any(q in asked for q in candidate.questions):
            return candidate.opener
    if not switch and topic is not None:
        for question in _BY_KEY[topic].extras:
            if question not in asked:
                return question
    for candidate in ordered:
        for question in candidate.extras:
            if question not in asked and candidate.key != topic:
                return question
    for question in GENERAL_QUESTIONS:
        if question not in asked:
            return question
    return LAST_RESORT


# --------------------------------------------------------------------------- replies


_FEEL = re.compile(r"\bi (?:feel|am feeling|'m feeling|felt) (.+)")
_FROM = re.compile(r"\bi(?: am|'m| come) from (.+)")
_LIKE = re.compile(r"\bi (?:really )?(?:love|like|enjoy|adore) (.+)")
_DISLIKE = re.compile(r"\bi (?:hate|dislike|don't like|do not like|can't stand|cannot stand) (.+)")
_WANT = re.compile(r"\bi (?:want|would like|'d like|wish) (to )?(.+)")
_THINK = re.compile(r"\bi (?:think|believe|guess) (.+)")
_AM = re.compile(r"\bi(?: am|'m) (.+)")
_MY = re.compile(r"\bmy (\w+)")


class _Reply:
    """One message answered against what the companion remembers; short-lived."""

    def __init__(self, memory: _Memory, message: str) -> None:
        self.m = memory
        self.raw = message[:MAX_CHARS]
        self.text = _normalise(message)
        self.words = _words(self.text)
        self.cases = _cases(self.raw)
        self.seed = (memory.turn, self.text)

    def has(self, *phrases: str) -> bool:
        padded = f" {' '.join(self.words)} "
        return any(f" {phrase} " in padded for phrase in phrases)

    def ask(
        self, opening: str, topic: str | None, *, switch: bool = False, raised: bool = False
    ) -> str:
        question = _next_question(self.m, topic, switch=switch, raised=raised)
        return f"{opening} {question}".strip()

    def answer(self) -> str:
        if not self.text.strip():
            return BLANK
        if not self.words:  # emoji or punctuation only: a reaction, not a request
            return self.ask(_pick(("I see!", "Ha, I like that.", "Alright!"), *self.seed), None)
        handlers = (
            self.name,
            self.farewell,
            self.about_me,
            self.change_topic,
            self.thanks,
            self.and_you,
            self.feeling,
            self.origin,
            self.on_topic,
            self.reflection,
            self.short,
            self.question,
        )
        for handler in handlers:
            reply = handler()
            if reply is not None:
                return reply
        return self.fallback()

    # ----------------------------------------------------------------- who is who

    def name(self) -> str | None:
        name = _name_from(self.raw, first_turn=self.m.expects_name)
        if name is not None and name != self.m.name:
            return f"Nice to meet you, {name}! " + (
                FIRST_QUESTION if FIRST_QUESTION not in self.m.asked else self.next_question()
            )
        if self.m.turn == 0 and all(w in _GREETINGS | _GREETING_FILLERS for w in self.words):
            return ASK_NAME
        return None

    def farewell(self) -> str | None:
        if not self.has("bye", "goodbye", "good bye", "see you", "have to go", "got to go"):
            return None
        name = f", {self.m.name}" if self.m.name else ""
        return f"It was lovely talking with you{name}. Goodbye, and take care!"

    def about_me(self) -> str | None:
        if self.has("how are you", "how do you do", "how is it going", "how's it going"):
            opening = "I am doing well, thank you for asking!"
            if HOW_ARE_YOU not in self.m.asked and FIRST_QUESTION not in self.m.asked:
                return f"{opening} {HOW_ARE_YOU}"
            return self.ask(opening, self.m.topic)
        if self.has("your name", "who are you", "what are you"):
            opening = f"My name is {NAME}, and I am a chat companion who loves a good conversation."
            return self.ask(opening, self.m.topic)
        if self.has("are you a robot", "are you a bot", "are you human", "are you real"):
            opening = (
                "I am a computer program, not a person, but I really do enjoy talking with you."
            )
            return self.ask(opening, self.m.topic)
        if self.has("my name", "remember me") and self.text.endswith("?"):
            if self.m.name:
                return self.ask(f"Of course! You are {self.m.name}.", self.m.topic)
            return ASK_NAME_AGAIN
        return None

    # ----------------------------------------------------------------- steering

    def change_topic(self) -> str | None:
        if not self.has(
            "something else",
            "another topic",
            "change the subject",
            "change the topic",
            "different topic",
            "talk about something",
            "this is boring",
            "that is boring",
            "that's boring",
        ):
            return None
        wanted = _topic_of(self.words)
        if wanted is not None and wanted.key != self.m.topic:
            question = wanted.opener if wanted.opener not in self.m.asked else None
            return f"Of course! {question or self.next_question(wanted.key)}"
        return self.ask("Of course, let's talk about something else.", self.m.topic, switch=True)

    def thanks(self) -> str | None:
        """Only a message that is all thanks: in "good, thanks" the thanks is politeness."""
        if not set(self.words) <= _THANKS_ONLY or not self.has("thanks", "thank", "cheers"):
            return None
        return self.ask("You're welcome!", self.m.topic)

    def and_you(self) -> str | None:
        asks_back = self.has(
            "and you", "what about you", "how about you", "and yourself", "do you"
        ) or (self.has("your favourite", "your favorite") and self.text.endswith("?"))
        if not asks_back:
            return None
        topic = _topic_of(self.words) or (_BY_KEY[self.m.topic] if self.m.topic else None)
        if topic is None:
            opening = "I am just happy to be chatting with you."
            return self.ask(opening, None)
        # They asked back instead of answering: a follow-up on their answer would not fit.
        question = _next_question(replace(self.m, last=None), topic.key)
        return f"{topic.about_me} {question}"

    def feeling(self) -> str | None:
        match = _FEEL.search(self.text)
        if match is None:
            return None
        reflected = _reflect(match.group(1), self.cases)
        if reflected is None:
            return None
        mood = _mood(self.words)
        if mood < 0:
            return f"I am sorry to hear that. What makes you feel {reflected}?"
        if mood > 0:
            return f"That's lovely! What makes you feel {reflected}?"
        return f"Why do you feel {reflected}?"

    # ----------------------------------------------------------------- content

    def origin(self) -> str | None:
        """'I am from Sweden': about the participant, before 'Sweden' makes it travel talk."""
        match = _FROM.search(self.text)
        reflected = _reflect(match.group(1), self.cases) if match else None
        return None if reflected is None else f"What is {reflected} like?"

    def on_topic(self) -> str | None:
        topic = _topic_of(self.words)
        if topic is None:
            return None
        if _DISLIKE.search(self.text) or (
            _mood(self.words) < 0 and not any(w in _NEGATIVE for w in self.words)
        ):  # "I don't like films": not sad news, just a topic to leave
            return self.ask("Fair enough, not everyone likes that.", topic.key, switch=True)
        if _mood(self.words) < 0:
            return self.ask("Oh, I am sorry to hear that.", topic.key, raised=True)
        return self.ask(_pick(topic.remarks, *self.seed), topic.key, raised=True)

    def reflection(self) -> str | None:
        text = self.text
        rules = (
            (_DISLIKE, "What is it about {} that you don't like?"),
            (_LIKE, "What do you like most about {}?"),
            (_THINK, "What makes you think {}?"),
            (_AM, "How long have you been {}?"),
        )
        for pattern, reply in rules:
            match = pattern.search(text)
            if match:
                reflected = _reflect(match.group(1), self.cases)
                first = reflected.split()[0] if reflected else ""
                if pattern is _AM and (first in _NOT_A_STATE or first in _POSITIVE):
                    continue  # "I'm fine", "I'm going to ...": nothing to ask how long about
                if pattern is _AM and first.isdigit():
                    continue
                if pattern is _LIKE and first == "to":
                    return "What do you enjoy about that?"
                if reflected is not None:
                    opening = "I am sorry to hear that. " if _mood(self.words) < 0 else ""
                    return opening + reply.format(reflected)
        match = _WANT.search(text)
        if match:
            reflected = _reflect(match.group(2), self.cases)
            if reflected is not None:
                if match.group(1):
                    return f"What makes you want to {reflected}?"
                return f"Why do you want {reflected}?"
        match = _MY.search(text)
        if match and match.group(1) in _FAMILY:
            who = match.group(1)
            if _mood(self.words) < 0:
                return f"I am sorry to hear about your {who}. How are you coping?"
            verb = "are" if who in _PLURAL_FAMILY else "is"
            return f"Tell me more! What {verb} your {who} like?"
        return None

    def short(self) -> str | None:
        """'yes', 'no', 'not really': an answer to the last question, so carry on."""
        if len(self.words) > 4:
            return None
        if self.words[0] in _YES or self.has("of course", "i do", "i have"):
            opening = _pick(("Lovely!", "How nice.", "I see."), *self.seed)
        elif self.words[0] in _NO or self.has("not really", "i don't", "i haven't"):
            opening = _pick(("I see.", "Fair enough.", "That's alright."), *self.seed)
        else:
            return None
        return self.ask(opening, self.m.topic)

    def question(self) -> str | None:
        if not self.text.rstrip().endswith("?"):
            return None
        opening = "That is a good question! I am not sure I know the answer."
        return f"{opening} What do you think?"

    def fallback(self) -> str:
        mood = _mood(self.words)
        if mood < 0:
            opening = "I am sorry to hear that."
        elif mood > 0:
            opening = _pick(("I am glad to hear that!", "That sounds lovely!"), *self.seed)
        elif len(self.words) > 8:
            opening = _pick(("That is interesting.", "Thank you for telling me."), *self.seed)
        else:
            opening = _pick(("I see.", "Mm-hmm.", "Right."), *self.seed)
        return self.ask(opening, self.m.topic)

    def next_question(self, topic: str | None = None) -> str:
        return _next_question(self.m, topic if topic is not None else self.m.topic)


class DemoChat:
    """The built-in open-chat system under test; safe to share, since it keeps no state."""

    async def respond(self, conversation: Conversation) -> SystemReply:
        return self.reply(conversation)

    def reply(self, conversation: Conversation) -> SystemReply:
        """Synchronous core of :meth:`respond`, for benchmarks and simulations."""
        try:
            memory = _recall(conversation.history)
            text = _Reply(memory, conversation.message or "").answer()
        except Exception:  # never let a participant see a crash; the text says sorry instead
            return SystemReply(texts=(ERROR,))
        return SystemReply(texts=(text,))

    async def close(self) -> None:
        """Nothing to release: the companion holds no connections."""
