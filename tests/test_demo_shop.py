"""The demo shop: every capability, typo tolerance, v1 versus v0, determinism and robustness."""

from __future__ import annotations

import random
import re
import time

import pytest

from bot.core.conversation import Conversation, SystemReply, Turn
from bot.systems.demo import ALEX_WISHLIST, CATALOGUE, TASK_SUCCESS, DemoShop
from bot.systems.demo.language import _TITLE_WORD_GAMES, analyse, canonical, edit_distance
from bot.systems.demo.shop import ERROR

ADVENTURE_LINUX = [g.title for g in CATALOGUE if "adventure" in g.genres and "linux" in g.platforms]
SEARCH = "Hi, I would like to search for adventure games on linux"


def _conversation(history: list[Turn], message: str) -> Conversation:
    return Conversation("session-1", "hmd-gift", "Find a gift for Alex.", tuple(history), message)


async def chat(*messages: str, variant: str = "v1") -> list[SystemReply]:
    """Play messages one after another through a fresh shop, as the bot would."""
    shop = DemoShop(variant)  # type: ignore[arg-type]
    history: list[Turn] = []
    replies = []
    for message in messages:
        reply = await shop.respond(_conversation(history, message))
        replies.append(reply)
        history.append(Turn(message, "\n".join(reply.texts)))
    await shop.close()
    return replies


async def last(*messages: str, variant: str = "v1") -> SystemReply:
    return (await chat(*messages, variant=variant))[-1]


def text(reply: SystemReply) -> str:
    return "\n".join(reply.texts)


def listed_titles(reply: SystemReply) -> list[str]:
    lines = re.findall(r"^\d+\. (.+?)(?:,|:| \()", text(reply), re.MULTILINE)
    return lines


# ----------------------------------------------------------------------------- catalogue


def test_catalogue_makes_the_constraints_matter() -> None:
    assert len(CATALOGUE) >= 30
    assert len({g.title for g in CATALOGUE}) == len(CATALOGUE)
    adventure_not_linux = [
        g for g in CATALOGUE if "adventure" in g.genres and "linux" not in g.platforms
    ]
    linux_not_adventure = [
        g for g in CATALOGUE if "linux" in g.platforms and "adventure" not in g.genres
    ]
    assert len(ADVENTURE_LINUX) >= 5
    assert len(adventure_not_linux) >= 3
    assert len(linux_not_adventure) >= 5
    titles = {g.title for g in CATALOGUE}
    assert set(ALEX_WISHLIST) <= titles
    on_wishlist = [t for t in ADVENTURE_LINUX if t in ALEX_WISHLIST]
    assert 2 <= len(on_wishlist) < len(ADVENTURE_LINUX)
    for game in CATALOGUE:
        assert game.price >= 0 and 1990 < game.year < 2030
        assert game.description.endswith(".") and "\n" not in game.description


def test_title_words_are_never_taken_for_keywords() -> None:
    for word in _TITLE_WORD_GAMES:
        assert canonical(word) == word


def test_edit_distance_counts_swaps_as_one() -> None:
    assert edit_distance("linux", "lniux") == 1
    assert edit_distance("wishlist", "wihslist") == 1
    assert edit_distance("adventure", "advnture") == 1
    assert edit_distance("abc", "xyz", limit=2) == 2


# ----------------------------------------------------------------------------- search


async def test_search_by_genre_and_platform_lists_numbered_games_with_prices() -> None:
    reply = await last(SEARCH)
    assert listed_titles(reply) == ADVENTURE_LINUX
    body = text(reply)
    assert body.startswith("Hello! I found 9 adventure games for Linux:")
    assert "1. Moss Hollow, €14.99 (Windows, Mac, Linux)" in body
    assert reply.events == frozenset()


async def test_search_with_a_budget() -> None:
    reply = await last("adventure games for linux under 15 euros")
    titles = listed_titles(reply)
    assert titles
    for title in titles:
        game = next(g for g in CATALOGUE if g.title == title)
        assert game.price <= 15 and "linux" in game.platforms and "adventure" in game.genres
    assert "up to €15" in text(reply)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("free games", ["Hexfield"]),
        ("games called star", ["Starfall Odyssey", "Starfall Tactics"]),
        ('games with "lantern" in the title', ["Lantern Road", "The Lantern Keeper"]),
        ("starfall games", ["Starfall Odyssey", "Starfall Tactics"]),
        ("puzzle games between 5 and 15 euros", None),
    ],
)
async def test_search_by_price_and_title_words(message: str, expected: list[str] | None) -> None:
    reply = await last(message)
    titles = listed_titles(reply)
    if expected is not None:
        assert titles == expected
    else:
        for title in titles:
            game = next(g for g in CATALOGUE if g.title == title)
            assert 5 <= game.price <= 15 and "puzzle" in game.genres


async def test_follow_up_constraints_refine_the_last_search() -> None:
    reply = await last("adventure games", "only linux ones")
    assert listed_titles(reply) == ADVENTURE_LINUX


async def test_search_without_results_says_so_politely() -> None:
    reply = await last("horror games for xbox")
    assert text(reply).startswith("I'm sorry, I could not find any horror games for Xbox.")


async def test_search_without_constraints_asks_for_them() -> None:
    first, second = await chat("Hi, I'm looking for a game", "adventure, on linux")
    assert "What kind of game are you looking for?" in text(first)
    assert listed_titles(first) == []
    assert listed_titles(second) == ADVENTURE_LINUX


async def test_a_linux_pc_means_linux() -> None:
    reply = await last("He likes adventure games and has a linux pc")
    assert listed_titles(reply) == ADVENTURE_LINUX


# ----------------------------------------------------------------------------- references


@pytest.mark.parametrize(
    "reference",
    [
        "the second one",
        "number 2",
        "2",
        "2nd",
        "#2",
        "tell me about the second",
        "The Clockwork Lighthouse",
        "clockwork",
        "what about the Clokwork Lighthuose?",
        "THE CLOCKWORK LIGHTHOUSE!!!",
    ],
)
async def test_references_to_listed_games(reference: str) -> None:
    reply = await last(SEARCH, reference)
    assert "The Clockwork Lighthouse" in text(reply)
    assert "2021" in text(reply) and "€12.99" in text(reply)
    assert "Would you like to add it to your wishlist?" in text(reply)


async def test_superlative_and_last_references() -> None:
    cheapest = await last(SEARCH, "the cheapest one")
    assert "Whispering Pines" in text(cheapest)
    final = await last(SEARCH, "the last one")
    assert "Ruins of Veldra" in text(final)


async def test_a_number_outside_the_list_is_questioned() -> None:
    reply = await last(SEARCH, "number 14")
    assert "there is no number 14 in the list; it has 9 games" in text(reply)


async def test_an_ambiguous_title_gets_a_question_then_the_answer_resolves_it() -> None:
    question, answer = await chat("tell me about lantern", "the second")
    assert "Did you mean one of these games?" in text(question)
    assert listed_titles(question) == ["Lantern Road", "The Lantern Keeper"]
    assert text(answer).startswith("The Lantern Keeper (2016)")


async def test_direct_questions_about_a_game_get_direct_answers() -> None:
    yes = await last("does paper kingdoms run on linux?")
    assert text(yes).startswith("Yes, Paper Kingdoms runs on Linux.")
    no = await last("does The Lantern Keeper run on linux?")
    assert text(no).startswith("No, The Lantern Keeper does not run on Linux.")
    genre = await last("is Hexfield an adventure game?")
    assert text(genre).startswith("No, Hexfield is not an adventure game.")


# ----------------------------------------------------------------------------- compare


async def test_compare_two_listed_games() -> None:
    reply = await last(SEARCH, "compare 2 and 4")
    body = text(reply)
    assert "1. The Clockwork Lighthouse: €12.99" in body
    assert "2. Lantern Road: €17.99" in body
    assert "The Clockwork Lighthouse is €5 cheaper and newer." in body
    assert "Both run on Windows and Linux." in body


@pytest.mark.parametrize(
    "message",
    [
        "Which is better, Lantern Road or Paper Kingdoms?",
        "what is the difference between lantern road and paper kingdoms",
        "lantern road vs paper kingdoms",
    ],
)
async def test_compare_by_title(message: str) -> None:
    reply = await last(message)
    assert listed_titles(reply) == ["Lantern Road", "Paper Kingdoms"]
    assert "Paper Kingdoms is €8 cheaper, while Lantern Road is newer." in text(reply)


async def test_compare_without_games_asks_which() -> None:
    question, partial, answer = await chat(
        "compare two games", "compare Moss Hollow", "Whispering Pines"
    )
    assert "Which two games would you like to compare?" in text(question)
    assert text(partial) == "Which game would you like to compare with Moss Hollow?"
    assert listed_titles(answer) == ["Moss Hollow", "Whispering Pines"]


# ----------------------------------------------------------------------------- wishlists


async def test_show_alex_wishlist() -> None:
    for message in ("What is on Alex's wishlist?", "show me his wish list", "alexs wishlst"):
        reply = await last(message)
        assert listed_titles(reply) == list(ALEX_WISHLIST)


@pytest.mark.parametrize(
    ("message", "answer"),
    [
        ("is number 1 on alex's wishlist?", "Yes, Moss Hollow is already on Alex's wishlist."),
        ("Does Alex already have the second one?", "Good news: The Clockwork Lighthouse is not"),
        ("is Skyward Caravan in his wishlist", "Yes, Skyward Caravan is already"),
        ("check if Lantern Road is on my friend's wishlist", "Good news: Lantern Road is not"),
    ],
)
async def test_check_alex_wishlist(message: str, answer: str) -> None:
    reply = await last(SEARCH, message)
    assert text(reply).startswith(answer)


async def test_check_it_after_describing() -> None:
    reply = await last(SEARCH, "tell me about number 4", "is it on alex's wishlist?")
    assert text(reply).startswith("Good news: Lantern Road is not on Alex's wishlist yet.")


async def test_check_all_listed_games_at_once() -> None:
    reply = await last(SEARCH, "which of these are already on alex's wishlist?")
    assert text(reply).startswith(
        "Moss Hollow, Echoes of Tidewater and Skyward Caravan are already on Alex's wishlist;"
    )


async def test_add_a_game_succeeds_with_the_event() -> None:
    reply = await last(SEARCH, "add the second one to my wishlist")
    assert reply.events == frozenset({TASK_SUCCESS})
    assert text(reply).startswith("Done! I added The Clockwork Lighthouse to your wishlist.")


@pytest.mark.parametrize(
    "messages",
    [
        (SEARCH, "number 4", "yes"),
        (SEARCH, "number 4", "add it"),
        (SEARCH, "is lantern road on alex's wishlist", "yes please"),
        (SEARCH, "I'll take Lantern Road"),
        (SEARCH, "put lantern raod on my wish-list"),
        ("add Lantern Road",),
    ],
)
async def test_many_ways_to_add(messages: tuple[str, ...]) -> None:
    reply = await last(*messages)
    assert reply.events == frozenset({TASK_SUCCESS})
    assert "I added Lantern Road to your wishlist" in text(reply)


async def test_add_without_a_game_asks_which_one() -> None:
    question, answer = await chat("Hi, I want to add a game to wishlist", "Paper Kingdoms")
    assert text(question) == "Hello! " + (
        "Which game would you like to add to your wishlist? You can tell me its title or its "
        "number in the list."
    )
    assert question.events == frozenset()
    assert answer.events == frozenset({TASK_SUCCESS})


async def test_add_with_constraints_shows_candidates_first() -> None:
    question, answer = await chat("add an adventure game for linux to my wishlist", "number 7")
    assert listed_titles(question) == ADVENTURE_LINUX
    assert "Which one would you like to add to your wishlist?" in text(question)
    assert "I added Whispering Pines" in text(answer)


async def test_adding_a_game_alex_wants_asks_for_confirmation() -> None:
    warned, confirmed = await chat("add Moss Hollow to my wishlist", "yes")
    assert text(warned) == (
        "Please note that Moss Hollow is already on Alex's wishlist. Do you still want to add "
        "it to your wishlist?"
    )
    assert warned.events == frozenset()
    assert confirmed.events == frozenset({TASK_SUCCESS})
    declined = await last("add Moss Hollow to my wishlist", "no")
    assert declined.events == frozenset()
    assert "I did not add it" in text(declined)


async def test_adding_twice_and_showing_my_wishlist() -> None:
    empty, added, again, shown = await chat(
        "show my wishlist", "add Paper Kingdoms", "add Paper Kingdoms", "what is in my wishlist?"
    )
    assert text(empty).startswith("Your wishlist is empty at the moment.")
    assert added.events == frozenset({TASK_SUCCESS})
    assert again.events == frozenset()
    assert text(again).startswith("Paper Kingdoms is already in your wishlist.")
    assert text(shown).startswith("You have Paper Kingdoms in your wishlist.")


# ----------------------------------------------------------------------------- small talk


@pytest.mark.parametrize(
    ("message", "start"),
    [
        ("hello", "Hello! I am the assistant of this game shop."),
        ("Good morning!", "Hello! I am the assistant"),
        ("thanks a lot", "You're welcome!"),
        ("thank you", "You're welcome!"),
        ("what can you do?", "I can search for games by genre, platform or price"),
        ("help", "I can search for games"),
        ("hepl", "I can search for games"),
        ("bye", "Goodbye, and thank you for visiting the shop!"),
        ("what's the weather like in Paris?", "I'm sorry, I did not understand that."),
        ("", "I'm sorry, I can only read text messages."),
    ],
)
async def test_small_talk_and_fallback(message: str, start: str) -> None:
    reply = await last(message)
    assert text(reply).startswith(start)
    assert reply.events == frozenset()


# ----------------------------------------------------------------------------- typos


@pytest.mark.parametrize(
    "message",
    [
        "adventrue gmaes for lnux",
        "ADVENTURE GAMES ON LINUX!!!",
        "advnture games on linx please",
        "Adventure games, Linux.",
        "any adventure games for ubuntu?",
        "serach for advneture games on lniux",
        "reccomend adventure games that run on linux",
    ],
)
async def test_typos_and_casing_in_searches(message: str) -> None:
    assert listed_titles(await last(message)) == ADVENTURE_LINUX


def test_typos_do_not_turn_common_words_into_keywords() -> None:
    assert analyse("make it quick").labels.isdisjoint({"weak", "add"})
    assert analyse("what kinds of games").refs == ()
    assert analyse("this is nice").labels.isdisjoint({"alex"})
    assert analyse("Can you show me Alex's wishlist first?").refs == ()


# ----------------------------------------------------------------------------- v0


async def test_v0_ignores_the_platform() -> None:
    v1 = listed_titles(await last(SEARCH))
    v0 = await last(SEARCH, variant="v0")
    assert "Harbor of Lost Letters" in listed_titles(v0)
    assert "for Linux" not in text(v0)
    assert set(v1) < set(listed_titles(v0)) | set(v1)
    assert len(listed_titles(v0)) > len(v1)


@pytest.mark.parametrize(
    "messages",
    [
        ("Hi, I want to add a game to wishlist",),
        ("I'm looking for a game",),
        ("tell me about lantern",),
        ("compare two games",),
        (SEARCH, "is it on alex's wishlist?"),
        (SEARCH, "number 14"),
        ("tell me more",),
    ],
)
async def test_v0_never_asks_for_clarification_but_v1_does(messages: tuple[str, ...]) -> None:
    questions = ("Which", "What kind", "Did you mean", "Which one did you mean")
    v1 = await last(*messages)
    v0 = await last(*messages, variant="v0")
    assert "?" in text(v1) and any(q in text(v1) for q in questions)
    assert not any(q in text(v0) for q in questions)


async def test_v0_adds_a_game_alex_wants_without_warning() -> None:
    reply = await last("add Moss Hollow to my wishlist", variant="v0")
    assert reply.events == frozenset({TASK_SUCCESS})


async def test_v0_adds_some_game_when_asked_vaguely() -> None:
    reply = await last("Hi, I want to add a game to wishlist", variant="v0")
    assert reply.events == frozenset({TASK_SUCCESS})
    assert "I added" in text(reply)


def test_unknown_variant_is_refused() -> None:
    with pytest.raises(ValueError, match="v2"):
        DemoShop("v2")  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- whole dialogue


@pytest.mark.parametrize("variant", ["v1", "v0"])
async def test_a_whole_gift_dialogue_fits_in_ten_exchanges(variant: str) -> None:
    messages = [
        SEARCH,
        "which of these are already on alex's wishlist?",
        "compare the second and the fourth",
        "tell me more about the first one",
        "is it on alex's wishlist?",
        "great, add it to my wishlist",
    ]
    replies = await chat(*messages, variant=variant)
    assert len(replies) <= 10
    assert [r.events for r in replies[:-1]] == [frozenset()] * (len(replies) - 1)
    assert replies[-1].events == frozenset({TASK_SUCCESS})
    assert "The Clockwork Lighthouse" in text(replies[-1])


# ----------------------------------------------------------------------------- determinism


async def test_same_input_same_output_and_system_texts_do_not_matter() -> None:
    messages = [SEARCH, "compare 1 and 3", "the first", "add it"]
    assert await chat(*messages) == await chat(*messages)
    history = [Turn(m, "anything at all") for m in messages[:-1]]
    shop = DemoShop()
    replayed = await shop.respond(_conversation(history, messages[-1]))
    assert replayed == (await chat(*messages))[-1]


# ----------------------------------------------------------------------------- robustness

GARBAGE = [
    "",
    "   ",
    "😀🎮🔥",
    "x" * 5000,
    "Привет, как дела? Хочу игру.",
    "你好，我想买游戏",
    "مرحبا",
    "\x00\n\t\r",
    "?!?!...,,,",
    "1234567890" * 500,
    "add " * 1000,
    "compare " + "1 and 2 " * 300,
    "€€€ $$$ ### 99999999999999999999999 0.0.0.0",
    "the 0th one",
    "number -1",
    "'; DROP TABLE games; --",
    "<b>bold</b> *markdown* _under_",
]


@pytest.mark.parametrize("variant", ["v1", "v0"])
@pytest.mark.parametrize("message", GARBAGE, ids=range(len(GARBAGE)))
async def test_garbage_gets_a_polite_reply(variant: str, message: str) -> None:
    for history in ([], [SEARCH], [SEARCH, "number 2"]):
        reply = await last(*history, message, variant=variant)
        assert reply.texts and all(t.strip() for t in reply.texts)
        assert reply.texts != (ERROR,)
        assert all(len(t) < 1500 for t in reply.texts)


def test_random_word_salad_never_breaks_the_shop() -> None:
    rng = random.Random(7)
    vocabulary = re.findall(
        r"\S+",
        "add compare the first second it that number 3 7 20 euros under between and or "
        "alex wishlist my his linux mac adventure puzzle free cheapest tell me about yes no "
        "lantern starfall moss hollow clockwork hi thanks help show find games one 0 €",
    )
    for variant in ("v1", "v0"):
        shop = DemoShop(variant)  # type: ignore[arg-type]
        for _ in range(150):
            history: list[Turn] = []
            for _ in range(rng.randint(1, 5)):
                message = " ".join(rng.choices(vocabulary, k=rng.randint(1, 8)))
                reply = shop.reply(_conversation(history, message))
                assert reply.texts and reply.texts != (ERROR,), message
                assert reply.events <= {TASK_SUCCESS}
                history.append(Turn(message, reply.texts[0]))


@pytest.mark.parametrize("variant", ["v1", "v0"])
def test_replies_are_plain_short_text(variant: str) -> None:
    shop = DemoShop(variant)  # type: ignore[arg-type]
    messages = [SEARCH, "compare 1 and 2", "is number 1 on alex's wishlist", "what can you do"]
    history: list[Turn] = []
    for message in messages:
        reply = shop.reply(_conversation(history, message))
        for t in reply.texts:
            assert not re.search(r"[*_`<>\[\]]", t)
            assert " 1 games" not in t and "  " not in t
            assert t[0].isupper() and t.rstrip()[-1] in ".?!:"
        history.append(Turn(message, text(reply)))


def test_replaying_ten_turns_is_fast() -> None:
    shop = DemoShop()
    messages = [
        SEARCH,
        "is the second one on alex's wishlist?",
        "compare 2 and 4",
        "tell me about the first one",
        "what about lantern",
        "the first",
        "is it on alex wishlist",
        "show my wishlist",
        "add a game",
        "thanks",
    ]
    conversation = _conversation([Turn(m, "...") for m in messages], "add it to my wishlist")
    shop.reply(conversation)  # warm the caches, as a running bot would be
    runs = 2000
    start = time.perf_counter()
    for _ in range(runs):
        shop.reply(conversation)
    per_call = (time.perf_counter() - start) / runs
    assert per_call < 0.0005, f"{per_call * 1e6:.0f} µs per call"
