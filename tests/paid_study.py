"""A paid study to rehearse: the HMD study recruiting on Prolific, as its file says it."""

from __future__ import annotations

from pathlib import Path

from tests.e2e_support import PROJECT_ROOT

RECRUITMENT = "recruitment:\n  platform: prolific\n  completion_code: C1A2B3C4\n"


def recruiting_study(folder: Path, extra: str = "") -> Path:
    """HMD with ``recruitment`` (and ``extra`` lines of the study file), written in ``folder``."""
    study = (PROJECT_ROOT / "scenarios/library/studies/hmd.yaml").read_text(encoding="utf-8")
    path = folder / "paid.yaml"
    path.write_text(f"{study}\n{RECRUITMENT}{extra}", encoding="utf-8")
    return path
