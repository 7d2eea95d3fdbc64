"""One opener for every backend: ``bot.store.open_store(url)`` gives the SQLite backend for
a path or a ``sqlite:///`` URL, refuses any other scheme in one line that names it, and
never prints a password a URL carries."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.cli import main
from bot.core.errors import StoreError
from bot.store import Access, open_store, shown_url
from bot.store.model import StepCommit

SERVER = "postgresql://ann:s3cret-pw@db.lab.example/studies"


async def _participants(url: str | Path) -> list[str]:
    store = await open_store(url, access=Access.READ)
    try:
        return [p.participant_id for p in await store.live_participants()]
    finally:
        await store.close()


async def _write(url: str | Path, participant: str) -> None:
    store = await open_store(url)
    try:
        await store.commit_step(StepCommit("s", participant, "{}", None, None))
    finally:
        await store.close()


async def test_a_path_and_its_sqlite_urls_open_the_same_study(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    await _write(Path("study.sqlite"), "by-path")
    await _write("sqlite:///study.sqlite", "by-relative-url")
    await _write(f"sqlite:///{tmp_path / 'study.sqlite'}", "by-absolute-url")
    assert f"sqlite:///{tmp_path}".startswith("sqlite:////")
    assert await _participants(str(tmp_path / "study.sqlite")) == []  # none came by Telegram
    store = await open_store("sqlite:///study.sqlite", access=Access.READ)
    try:
        loaded = {p.participant_id for p in await store.load_participants("s")}
    finally:
        await store.close()
    assert loaded == {"by-path", "by-relative-url", "by-absolute-url"}


async def test_a_file_with_a_colon_in_its_name_is_a_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    await _write("study:v2.sqlite", "p")
    assert await _participants(tmp_path / "study:v2.sqlite") == []


@pytest.mark.parametrize("url", ["mysql://ann:s3cret-pw@h/db", "MSSQL://ann:s3cret-pw@h/db"])
async def test_another_scheme_is_refused_in_one_line_without_its_password(url: str) -> None:
    with pytest.raises(StoreError) as refused:
        await open_store(url)
    said = str(refused.value)
    scheme = url.split(":", 1)[0].lower()
    assert said.startswith(f"no store backend for {scheme!r} URLs (")
    assert "s3cret" not in said and "ann:***@" in said
    assert "\n" not in said


@pytest.mark.parametrize("url", [SERVER, "POSTGRESQL://ann:s3cret-pw@db.lab.example/studies"])
async def test_a_server_url_with_a_password_is_refused_before_any_connection(url: str) -> None:
    """A password on the command line is seen by every user of the machine (``ps``):
    libpq's own places (PGPASSWORD, ~/.pgpass, a service file) are the way."""
    with pytest.raises(StoreError) as refused:
        await open_store(url)
    said = str(refused.value)
    assert "s3cret" not in said and "PGPASSWORD" in said and "\n" not in said


async def test_a_url_read_as_a_path_is_still_refused_without_its_password() -> None:
    """A command line that reads --db as a path folds the slashes: still refused, still
    without the password."""
    with pytest.raises(StoreError) as refused:
        await open_store(Path(SERVER))
    assert "s3cret" not in str(refused.value)
    assert "was read as a path" in str(refused.value)


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///", "sqlite://host/study.sqlite"])
async def test_a_sqlite_url_without_a_file_is_refused(url: str) -> None:
    with pytest.raises(StoreError, match=r"names no file: write sqlite:///relative/path"):
        await open_store(url)


async def test_a_missing_study_is_not_made_by_a_reader(tmp_path: Path) -> None:
    for access in (Access.READ, Access.ATTACH, Access.UPGRADE):
        with pytest.raises(StoreError, match=r"^no study database at "):
            await open_store(tmp_path / "missing.sqlite", access=access)
    assert await asyncio.to_thread(lambda: list(tmp_path.iterdir())) == []


async def test_a_setting_the_backend_does_not_know_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"has no setting 'pool_size'$"):
        await open_store(tmp_path / "study.sqlite", pool_size="5")


def test_a_password_is_hidden_wherever_it_sits() -> None:
    assert shown_url(SERVER) == "postgresql://ann:***@db.lab.example/studies"
    assert shown_url("postgresql://ann:a/b@c@h/db") == "postgresql://ann:***@h/db"
    assert shown_url("postgresql:/ann:pw@h/db") == "postgresql:/ann:***@h/db"
    assert shown_url("postgresql://ann@h/db") == "postgresql://ann@h/db"
    assert shown_url("sqlite:///folder/a@b.sqlite") == "sqlite:///folder/a@b.sqlite"
    assert shown_url("study.sqlite") == "study.sqlite"


COMMANDS = [
    ["backup", "--out", "copy.sqlite"],
    ["report"],
    ["invite", "--n", "1", "--bot", "ozlab_test_bot"],
    ["erase", "P-1"],
    ["demo", "-n", "1"],
    ["copy", "--to", "copy.sqlite"],
]


@pytest.mark.parametrize(
    ("url", "said"),
    [(SERVER, "PGPASSWORD"), ("mysql://ann:s3cret-pw@h/db", "no store backend for 'mysql'")],
    ids=["password", "mysql"],
)
@pytest.mark.parametrize("args", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_a_command_given_a_url_it_cannot_use_says_so_in_one_line(
    args: list[str],
    url: str,
    said: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    code = main([args[0], "--db", url, *args[1:]])
    err = capsys.readouterr().err
    assert code == StoreError.exit_code
    [line] = err.splitlines()
    assert said in line and "s3cret" not in line
