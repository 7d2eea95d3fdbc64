"""``python -m analytics report --db ...``: the same as the ``analytics`` command."""

import sys

from analytics.cli import main

sys.exit(main())
