"""``python -m analytics report --db ...``: the same as the ``analytics`` command."""

import sys

from bot.cli import analytics_main

sys.exit(analytics_main())
