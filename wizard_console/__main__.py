"""``python -m wizard_console ...`` is ``ozlab wizard ...``."""

from __future__ import annotations

import sys

from bot.cli import main

if __name__ == "__main__":
    sys.exit(main(["wizard", *sys.argv[1:]]))
