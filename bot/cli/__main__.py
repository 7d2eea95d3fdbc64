"""``python -m bot.cli ...`` is ``ozlab ...``."""

import sys

from bot.cli import main

sys.exit(main())
