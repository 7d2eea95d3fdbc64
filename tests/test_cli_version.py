"""``ozlab --version``: the installed version, as a methods section or a bug report cites it."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version

import pytest

from bot.cli import main


def test_version_is_the_installed_distributions(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--version"])
    assert stopped.value.code == 0
    assert capsys.readouterr().out == f"ozlab {version('ozlab')}\n"


def test_version_loads_no_analytics() -> None:
    """The bot's command line stays light: --version imports neither pandas nor pingouin."""
    code = (
        "import sys\nfrom bot.cli import main\ntry:\n    main(['--version'])\n"
        "except SystemExit:\n    print(sorted({'pandas', 'pingouin'} & set(sys.modules)))"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert shown.stdout.splitlines() == [f"ozlab {version('ozlab')}", "[]"]
