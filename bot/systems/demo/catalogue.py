"""The demo shop's data: an invented game catalogue and Alex's wishlist.

The catalogue is built so that the HMD gift task has teeth: several adventure games run on
Linux (some already on Alex's wishlist), some adventure games do not run on Linux, and many
Linux games are not adventures, so a system that drops a constraint visibly fails.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Game:
    """One game on sale; ``genres`` and ``platforms`` use the keys of the name tables below."""

    title: str
    genres: tuple[str, ...]
    platforms: tuple[str, ...]
    price: float
    year: int
    description: str


GENRE_NAMES: dict[str, str] = {
    "adventure": "adventure",
    "action": "action",
    "puzzle": "puzzle",
    "strategy": "strategy",
    "rpg": "RPG",
    "shooter": "shooter",
    "racing": "racing",
    "platformer": "platformer",
    "simulation": "simulation",
    "sports": "sports",
    "horror": "horror",
    "survival": "survival",
}

PLATFORM_NAMES: dict[str, str] = {
    "windows": "Windows",
    "mac": "Mac",
    "linux": "Linux",
    "playstation": "PlayStation",
    "xbox": "Xbox",
    "switch": "Switch",
}

CATALOGUE: tuple[Game, ...] = (
    # Adventure games that run on Linux (three of them are on Alex's wishlist).
    Game(
        "Moss Hollow",
        ("adventure", "puzzle"),
        ("windows", "mac", "linux"),
        14.99,
        2019,
        "A hand-drawn journey through a flooded forest village.",
    ),
    Game(
        "The Clockwork Lighthouse",
        ("adventure", "puzzle"),
        ("windows", "linux"),
        12.99,
        2021,
        "Repair a strange lighthouse and uncover the secrets of its keeper.",
    ),
    Game(
        "Echoes of Tidewater",
        ("adventure", "rpg"),
        ("windows", "linux"),
        24.99,
        2022,
        "A story-rich quest along a coast haunted by old storms.",
    ),
    Game(
        "Lantern Road",
        ("adventure",),
        ("windows", "mac", "linux", "switch"),
        17.99,
        2020,
        "A quiet road trip through valleys lit by paper lanterns.",
    ),
    Game(
        "Paper Kingdoms",
        ("adventure", "platformer"),
        ("windows", "mac", "linux", "switch"),
        9.99,
        2018,
        "Fold and unfold a papercraft world to rescue its lost king.",
    ),
    Game(
        "Skyward Caravan",
        ("adventure", "simulation"),
        ("windows", "linux", "playstation"),
        19.99,
        2023,
        "Lead a flying merchant caravan across a sea of floating islands.",
    ),
    Game(
        "Whispering Pines",
        ("adventure", "horror"),
        ("windows", "mac", "linux"),
        7.99,
        2017,
        "Investigate the disappearance of a park ranger in a misty forest.",
    ),
    Game(
        "Nomad's Compass",
        ("adventure",),
        ("windows", "mac", "linux"),
        34.99,
        2024,
        "Cross a vast desert, trading stories for water and shelter.",
    ),
    Game(
        "Ruins of Veldra",
        ("adventure", "action"),
        ("windows", "linux", "xbox"),
        39.99,
        2023,
        "Explore a sunken empire and fight the guardians of its ruins.",
    ),
    # Adventure games that do not run on Linux.
    Game(
        "Harbor of Lost Letters",
        ("adventure",),
        ("windows", "mac"),
        15.99,
        2020,
        "Deliver forgotten letters and piece together a town's history.",
    ),
    Game(
        "Crimson Atlas",
        ("adventure", "action"),
        ("windows", "playstation", "xbox"),
        49.99,
        2023,
        "Chart a war-torn continent with a band of young cartographers.",
    ),
    Game(
        "The Lantern Keeper",
        ("adventure", "puzzle"),
        ("windows", "mac"),
        11.99,
        2016,
        "Keep a mountain lantern burning through a long and lonely winter.",
    ),
    Game(
        "Sunken Cathedral",
        ("adventure", "puzzle"),
        ("windows", "switch"),
        19.99,
        2021,
        "Dive into a drowned cathedral full of riddles and echoes.",
    ),
    Game(
        "Tales from Orchard Hill",
        ("adventure",),
        ("mac", "switch"),
        13.99,
        2019,
        "Help the villagers of a sleepy orchard prepare for the harvest fair.",
    ),
    Game(
        "Glass Desert",
        ("adventure", "rpg"),
        ("windows", "playstation", "xbox"),
        29.99,
        2022,
        "Wander a desert of glass dunes in search of a vanished sister.",
    ),
    Game(
        "Starfall Odyssey",
        ("adventure", "action"),
        ("windows", "playstation"),
        59.99,
        2024,
        "Pilot a patched-up starship through a collapsing galaxy.",
    ),
    # Games that run on Linux but are not adventures.
    Game(
        "Starfall Tactics",
        ("strategy",),
        ("windows", "mac", "linux"),
        24.99,
        2021,
        "Command a small fleet in turn-based battles among the stars.",
    ),
    Game(
        "Iron Meadows",
        ("strategy", "simulation"),
        ("windows", "linux"),
        19.99,
        2020,
        "Build a farming town and defend it from rival barons.",
    ),
    Game(
        "Circuit Breakers",
        ("puzzle",),
        ("windows", "mac", "linux"),
        4.99,
        2016,
        "Route power through ever stranger circuit boards.",
    ),
    Game(
        "Neon Drift",
        ("racing",),
        ("windows", "linux", "switch"),
        14.99,
        2019,
        "Race through glowing city streets to a synthwave soundtrack.",
    ),
    Game(
        "Pixel Pioneers",
        ("platformer",),
        ("windows", "mac", "linux", "switch"),
        8.99,
        2018,
        "Jump and dash through a retro world with a crew of tiny explorers.",
    ),
    Game(
        "Frostbound",
        ("survival",),
        ("windows", "linux"),
        22.99,
        2022,
        "Survive an endless winter by hunting, crafting and keeping warm.",
    ),
    Game(
        "Orbital Foundry",
        ("simulation", "strategy"),
        ("windows", "mac", "linux"),
        27.99,
        2023,
        "Design and run a factory in orbit around a gas giant.",
    ),
    Game(
        "Grim Gallery",
        ("horror", "puzzle"),
        ("windows", "linux"),
        11.99,
        2020,
        "Escape a museum whose paintings watch your every move.",
    ),
    Game(
        "Dungeon Ledger",
        ("rpg", "strategy"),
        ("windows", "mac", "linux"),
        16.99,
        2021,
        "Run the accounts of a dungeon and keep its monsters paid.",
    ),
    Game(
        "Goal Rush",
        ("sports",),
        ("windows", "linux", "playstation", "xbox"),
        29.99,
        2022,
        "Fast five-a-side football with over-the-top tricks.",
    ),
    Game(
        "Hexfield",
        ("puzzle", "strategy"),
        ("windows", "mac", "linux"),
        0.0,
        2015,
        "A free game of territory and tactics on a hexagonal board.",
    ),
    # Games that are neither adventures nor available on Linux.
    Game(
        "Thunder Circuit",
        ("racing",),
        ("windows", "playstation", "xbox"),
        39.99,
        2023,
        "Championship racing with realistic cars and weather.",
    ),
    Game(
        "Shadow Protocol",
        ("shooter", "action"),
        ("windows", "playstation", "xbox"),
        49.99,
        2024,
        "A tactical shooter about a spy network gone rogue.",
    ),
    Game(
        "Petal Patch",
        ("simulation",),
        ("mac", "switch"),
        19.99,
        2021,
        "Grow a flower garden and sell bouquets to the neighbours.",
    ),
    Game(
        "Blade of Aurum",
        ("rpg", "action"),
        ("windows", "playstation"),
        59.99,
        2022,
        "An epic fantasy quest to reforge a legendary golden sword.",
    ),
    Game(
        "Tiny Tycoon",
        ("simulation",),
        ("windows", "mac"),
        9.99,
        2017,
        "Grow a corner shop into a business empire.",
    ),
    Game(
        "Court Kings",
        ("sports",),
        ("playstation", "xbox", "switch"),
        39.99,
        2023,
        "Street basketball tournaments with friends.",
    ),
    Game(
        "Void Runners",
        ("shooter",),
        ("windows", "xbox"),
        19.99,
        2020,
        "Fast arena shooting on the hull of a drifting space station.",
    ),
)

ALEX_WISHLIST: tuple[str, ...] = (
    "Moss Hollow",
    "Echoes of Tidewater",
    "Skyward Caravan",
    "Starfall Tactics",
)
"""Titles already on Alex's wishlist; a good gift is an adventure game for Linux not on it."""
