"""Linguistic stress tests after IDIAL (EVALITA 2018): the eleven phenomena and their tests.

A stress test minimally changes one logged participant utterance by one phenomenon and
replays it to the system. This package makes the tests and nothing else; storing, replaying
and judging them live with the ``ozlab stress`` commands.

- :mod:`bot.core.phenomena`  the eleven phenomena (ST-1 … ST-11) and their three groups
- :mod:`bot.core.stress`      utterances in, perturbations out (frozen dataclasses)
- :mod:`bot.stress.generate`   ST-1 to ST-4, offline, seeded, from the shipped word lists
- :mod:`bot.stress.suggest`    where each phenomenon applies, so a person writes the variant
- :mod:`bot.stress.authored`   tests a person wrote, from a YAML or CSV file
- :mod:`bot.stress.propose`    variants a language model proposes, and their human review

Everything here is pure but for reading the shipped word lists (:mod:`bot.stress.lexicon`),
the authored file and the language model's endpoint; no pandas: the bot process may use it.
"""
