"""Analytics: the study database read into tidy pandas DataFrames, and the statistics of the
per-system report.

Nothing here writes to the database, and nothing in ``bot/`` imports this package but the
analysis commands of ``bot/cli/`` when they run: pandas and pingouin stay out of the bot's
process.
"""

from __future__ import annotations
