"""The documentation site builds, its links hold, and the study file reference is current."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from questionnaires.models import Questionnaire
from scenarios.jobs import AnnotationJob
from scenarios.models import Scenario, Study
from scenarios.reference import all_models, reference

pytestmark = pytest.mark.slow  # whole commands, reports or renderings: make test, not make check

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
REFERENCE = DOCS / "reference" / "study-file.md"

# The guides' headings as the README had them before it became the quick start: each still
# has a page or a section of one.
GUIDES = (
    "Two commands",
    "Running a real study",
    "On a server",
    "The protocols ozlab ships",
    "Stress tests (IDIAL)",
    "Annotators: rating the stored conversations afterwards",
    "What annotators see in Telegram",
    "Writing a study",
    "Piloting a study before it goes live",
    "Chat with it yourself: `ozlab chat`, `ozlab check --ping`",
    "Simulated participants: `ozlab demo --study`, `ozlab pilot`, `report --pilot`",
    "Systems under test",
    "What a participant experiences",
    "Recruiting: Prolific, invitation codes, payments",
    "Participants' rights: withdrawal and erasure",
    "Backups and erasure",
    "The wizard console",
    "The report",
    "Agreement between annotators",
    "The data for a paper: `ozlab export`",
    "Planning the sample: `ozlab power`",
    "How it is built",
    "Database",
)


def _mkdocs(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=120,
        check=False,
    )


def test_the_site_builds_with_every_link_whole(tmp_path: Path) -> None:
    built = _mkdocs(ROOT / "mkdocs.yml", tmp_path / "site")
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "site" / "reference" / "study-file" / "index.html").exists()
    assert (tmp_path / "site" / "python-adapter" / "index.html").exists()


@pytest.mark.parametrize("link", ["[gone](no-such-page.md)", "[gone](rights.md#no-such-section)"])
def test_a_broken_link_fails_the_build(tmp_path: Path, link: str) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(DOCS, copy / "docs")
    shutil.copy(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
    page = copy / "docs" / "running.md"
    page.write_text(page.read_text(encoding="utf-8") + f"\nSee {link}.\n", encoding="utf-8")
    built = _mkdocs(copy / "mkdocs.yml", tmp_path / "site")
    assert built.returncode != 0
    assert "running.md" in built.stderr


def test_the_committed_reference_is_what_the_models_say() -> None:
    written = subprocess.run(
        [sys.executable, "-m", "scenarios.reference"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=True,
    )
    assert written.stdout == reference()
    assert REFERENCE.read_text(encoding="utf-8") == written.stdout, (
        "docs/reference/study-file.md is stale: "
        "python -m scenarios.reference > docs/reference/study-file.md"
    )


def test_every_field_a_researcher_writes_says_what_it_means() -> None:
    undescribed = [
        f"{name}.{field}"
        for root in (Study, Scenario, Questionnaire, AnnotationJob)
        for name, model in all_models(root).items()
        for field, info in model.model_fields.items()
        if not (info.description or "").strip()
    ]
    assert undescribed == []


def test_every_guide_of_the_old_readme_has_a_home() -> None:
    headings = {
        match.group(1).strip()
        for page in DOCS.rglob("*.md")
        for match in re.finditer(r"^#{1,3} (.+)$", page.read_text(encoding="utf-8"), re.M)
    }
    assert [title for title in GUIDES if title not in headings] == []


def test_the_readme_is_a_quick_start_that_points_to_the_guides() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make demo" in readme and "make test" in readme
    assert len(readme) < 8000
    for target in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / target).exists(), target


def test_every_file_the_guides_name_is_there() -> None:
    """Modules move; a guide that names one where it no longer is sends a reader nowhere."""
    named = {
        path
        for page in [ROOT / "README.md", *DOCS.rglob("*.md")]
        for path in re.findall(
            r"`((?:bot|scenarios|questionnaires|analytics|wizard_console|bench|tests)/[^`\s<]*)`",
            page.read_text(encoding="utf-8"),
        )
    }
    assert named
    assert sorted(path for path in named if not (ROOT / path).exists()) == []


def test_the_readme_names_every_protocol_that_ships() -> None:
    intro = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## ")[0].lower()
    protocols = [
        yaml.safe_load(study.read_text(encoding="utf-8"))["title"].split(":")[0]
        for study in sorted((ROOT / "scenarios" / "library" / "studies").glob("*.yaml"))
    ]
    assert len(set(protocols)) == 7  # hmd-llm is the HMD protocol with a language model
    assert [name for name in protocols if name.lower() not in " ".join(intro.split())] == []


def test_the_adapter_page_shows_the_example_as_it_ships() -> None:
    page = (DOCS / "python-adapter.md").read_text(encoding="utf-8")
    shown = re.search(r"```python\n(from .+?)```", page, re.S)
    assert shown is not None
    source = (ROOT / "bot" / "systems" / "examples" / "echo.py").read_text(encoding="utf-8")
    assert source.endswith(shown.group(1))
