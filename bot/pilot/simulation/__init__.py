"""Simulated participants that let ``ozlab demo`` and ``ozlab pilot`` play a whole study
without people, with words from the study's own ``simulation:`` blocks."""
