"""ozlab's commands against a real PostgreSQL server, as a researcher runs them: the same
numbers as on a SQLite file, a study moved both ways, credentials only from libpq's
environment, and two studies of one database kept apart while their bots run at once."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import pytest

from bot.pilot.emulator import BotApiEmulator
from tests.command_line import environment
from tests.conftest import consent, say
from tests.e2e_support import PROJECT_ROOT, OzlabProcesses
from tests.postgres_server import PASSWORD, PASSWORD_ROLE, PostgresServer
from tests.server_commands import here, numbers, ok, one_line, ozlab, report
from tests.store_reads import reading, tables
from tests.stress_support import start_shops
from tests.terminal_support import Terminal

pytestmark = pytest.mark.slow


def exported(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir()) if path.is_file()}


def test_a_demo_on_postgresql_reports_and_exports_as_on_sqlite(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    server, file = postgres.fresh_database(), tmp_path / "demo.sqlite"
    ok(here("demo", "-n", "6", "--db", file))
    shown = ok(here("demo", "-n", "6", "--db", server))
    assert "6 simulated participants" in shown
    on_file = numbers(file)
    assert numbers(server, "--study", "hmd") == on_file
    assert numbers(f"{server}?study=hmd") == on_file
    assert numbers(server) == on_file  # the only study the database keeps
    ok(here("export", "--db", file, "--out", tmp_path / "from-file"))
    ok(here("export", "--db", server, "--study", "hmd", "--out", tmp_path / "from-server"))
    from_file = exported(tmp_path / "from-file")
    assert from_file and exported(tmp_path / "from-server") == from_file
    # each study's register names the files written from it (what an erasure cannot reach)
    for db, folder in ((file, "from-file"), (server, "from-server")):
        registered = reading(db, lambda store: store.registered_files())
        assert {f.path for f in registered} == {str(p) for p in (tmp_path / folder).iterdir()}
    # a backup of the server's study is a SQLite file the report reads as the original
    backup = tmp_path / "backup.sqlite"
    assert ok(here("backup", "--db", server, "--out", backup)) == ""
    assert numbers(backup) == on_file


def test_an_arena_demo_on_a_server_is_replaced_with_its_votes(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    """The simulated participants' votes are the demo's own on a server too."""
    server = postgres.fresh_database()
    ok(here("demo", "--study", "arena", "-n", "2", "--db", server))
    ok(here("demo", "--study", "arena", "-n", "1", "--db", server))
    found = numbers(server, "--study", "arena")
    assert found["participation"]["overall"]["participants"] == 1
    assert found["pairwise"]["questions"][0]["raters"] == 1


def test_a_study_moves_to_a_server_and_back_unchanged(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    laptop, server, back = tmp_path / "laptop.sqlite", postgres.fresh_database(), tmp_path / "b.db"
    ok(here("demo", "-n", "5", "--db", laptop))
    said = ok(here("copy", "--db", laptop, "--to", server))
    assert "copied study hmd" in said and "checked" in said
    ok(here("copy", "--db", server, "--to", back))
    before = numbers(laptop)
    assert numbers(server, "--study", "hmd") == before
    assert numbers(back) == before
    assert tables(back) == tables(laptop)
    # onto a database that keeps the study already: refused in one line, nothing changed
    kept = tables(f"{server}?study=hmd")
    refused = one_line(ozlab("copy", "--db", laptop, "--to", server, cwd=tmp_path), 5)
    assert "hmd" in refused
    assert tables(f"{server}?study=hmd") == kept


def test_a_copy_as_a_role_that_cannot_make_the_schema_says_which_grant_is_missing(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    """A lab's role for a study without the schema made for it (or the database's CREATE
    right) is refused in one line that names the grant, status 5; once the schema is made
    for it, as the guide does, the copy goes through."""
    laptop, server = tmp_path / "laptop.sqlite", postgres.fresh_database()
    ok(here("demo", "-n", "2", "--annotators", "0", "--db", laptop))
    database = server.rsplit("/", 1)[1]
    role = f"copier_{database}"
    postgres.run_sql(f"CREATE ROLE {role} LOGIN")
    as_role = postgres.url_for(role, database)
    refused = one_line(ozlab("copy", "--db", laptop, "--to", as_role, cwd=tmp_path), 5)
    assert f'role {role} may not create schema "hmd" in database {database}' in refused
    assert f'CREATE SCHEMA "hmd" AUTHORIZATION "{role}"' in refused, refused
    # a schema of another role's: the tables cannot be made in it
    postgres.run_sql('CREATE SCHEMA "hmd"', url=server)
    refused = one_line(ozlab("copy", "--db", laptop, "--to", as_role, cwd=tmp_path), 5)
    assert f'ALTER SCHEMA "hmd" OWNER TO "{role}"' in refused, refused
    postgres.run_sql(f'ALTER SCHEMA "hmd" OWNER TO {role}', url=server)
    assert "copied study hmd" in ok(ozlab("copy", "--db", laptop, "--to", as_role, cwd=tmp_path))


def test_ozlab_db_stands_in_for_db(postgres: PostgresServer, tmp_path: Path) -> None:
    server = postgres.fresh_database()
    ok(here("demo", "-n", "3", "--annotators", "0", "--db", server))
    through_env = numbers(None, env={"OZLAB_DB": server})
    assert through_env == numbers(server)


# --- credentials only from libpq's environment ---------------------------------------------


def password_role_database(postgres: PostgresServer, tmp_path: Path) -> tuple[str, str, Path]:
    """A fresh database the password role may create a study in: its URL for that role and
    for the superuser, and an empty home folder (no ~/.pgpass unless a test writes one)."""
    superuser = postgres.fresh_database()
    database = superuser.rsplit("/", 1)[1]
    postgres.run_sql(f'GRANT CREATE ON DATABASE "{database}" TO {PASSWORD_ROLE}')
    home = tmp_path / "home"
    home.mkdir()
    return postgres.url_for(PASSWORD_ROLE, database), superuser, home


def test_a_password_comes_from_pgpassword_or_pgpass_and_is_never_shown(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    url, superuser, home = password_role_database(postgres, tmp_path)
    bare = {"HOME": str(home)}
    refused = one_line(ozlab("demo", "-n", "2", "--db", url, cwd=tmp_path, env=bare), 5)
    assert "password" in refused and PASSWORD not in refused
    said = [
        ok(
            ozlab(
                "demo",
                "-n",
                "2",
                "--annotators",
                "0",
                "--db",
                url,
                cwd=tmp_path,
                env=bare | {"PGPASSWORD": PASSWORD},
            )
        )
    ]
    pgpass = home / ".pgpass"
    pgpass.write_text(f"127.0.0.1:{postgres.port}:*:{PASSWORD_ROLE}:{PASSWORD}\n")
    pgpass.chmod(0o600)
    numbers = report(url, tmp_path, env=bare)
    assert numbers == report(superuser, tmp_path)
    wrong = ozlab(
        "report",
        "--db",
        url,
        cwd=tmp_path,
        env={"HOME": str(tmp_path), "PGPASSWORD": "x" + PASSWORD},
    )
    assert PASSWORD not in one_line(wrong, 5)
    # a password in the URL itself is refused without being repeated
    given = url.replace(f"{PASSWORD_ROLE}@", f"{PASSWORD_ROLE}:{PASSWORD}@")
    inline = ozlab("report", "--db", given, cwd=tmp_path, env=bare)
    assert inline.returncode != 0 and PASSWORD not in inline.stdout + inline.stderr
    for done in said:
        assert PASSWORD not in done


def counted(server: str, study: str) -> tuple[object, object]:
    """The studies ``ozlab report --study`` speaks of, and how many participants."""
    found = numbers(server, "--study", study)
    study_part, participation = found["study"], found["participation"]
    assert isinstance(study_part, dict) and isinstance(participation, dict)
    return study_part["study_ids"], participation["overall"]["participants"]


# --- two studies of one database, their bots at once -----------------------------------------


async def test_two_studies_run_at_once_on_one_database_and_stay_apart(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    server = postgres.fresh_database()
    async with (
        BotApiEmulator("123456789:AAE-first-bot-token-0123456789abcdefg") as first,
        BotApiEmulator("987654321:AAE-other-bot-token-0123456789abcdefg") as second,
    ):
        hmd = OzlabProcesses(first, tmp_path, server)
        xrec = OzlabProcesses(second, tmp_path, server)
        try:
            await hmd.start(study="hmd")
            await xrec.start(study="xrec")
            for user_id, words in ((701, "dolphin telescope"), (702, "marble orchard")):
                p = first.participant(user_id)
                await consent(p)
                await say(p, words)
            p = second.participant(703)
            await p.send_text("/start")
            await p.wait_for_text("Before you start")
            before = len(p.messages)
            await p.tap(text="I agree")
            await p.wait_for(lambda q: len(q.messages) > before)
            await say(p, "saffron kayak")
            # one writer per study: a second bot on hmd is refused, one line, while both run
            again = await hmd.start(study="hmd", wait_ready=False)
            assert await asyncio.wait_for(again.finish(), 60) == 5
            lines = again.stderr.strip().splitlines()
            assert len(lines) == 1 and "Traceback" not in again.stderr, again.stderr
            for bots in (hmd, xrec):
                for bot in bots.started[:1]:
                    assert await bot.terminate() == 0
        finally:
            await hmd.close()
            await xrec.close()
    mine, theirs = f"{server}?study=hmd", f"{server}?study=xrec"
    ours, others = tables(mine), tables(theirs)
    assert {r["study_id"] for r in ours["sessions"]} == {"hmd"}
    assert {r["study_id"] for r in others["sessions"]} == {"xrec"}
    assert len(ours["participants"]) == 2 and len(others["participants"]) == 1
    texts = {r["user_text"] for r in ours["exchanges"]}
    assert texts == {"dolphin telescope", "marble orchard"}
    assert {r["user_text"] for r in others["exchanges"]} == {"saffron kayak"}
    # the report of each is of its own participants only
    assert counted(server, "hmd") == (["hmd"], 2)
    assert counted(server, "xrec") == (["xrec"], 1)
    # erasing one of hmd's leaves xrec's rows as they were
    gone = ours["participants"][0]["participant_id"]
    ok(here("erase", "--db", mine, gone))
    after = tables(mine)
    assert [r["participant_id"] for r in after["participants"]] == [
        r["participant_id"] for r in ours["participants"][1:]
    ]
    assert tables(theirs) == others
    assert counted(server, "hmd") == (["hmd"], 1)
    assert counted(server, "xrec") == (["xrec"], 1)
    # a backup of xrec holds nothing of hmd's
    backup = tmp_path / "xrec.sqlite"
    ok(here("backup", "--db", theirs, "--out", backup))
    assert tables(backup) == others
    blob = backup.read_bytes()
    assert b"saffron kayak" in blob
    assert b"marble orchard" not in blob and b"dolphin telescope" not in blob


# --- the other commands, each once with a server's URL ---------------------------------------


def test_pilot_power_invite_and_import_take_a_server(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    piloted, server = postgres.fresh_database(), postgres.fresh_database()
    ok(here("pilot", "hmd", "--simulator", "scripted", "-n", "3", "--db", piloted))
    assert len(tables(piloted)["participants"]) == 3
    pilot = ok(here("report", "--db", piloted, "--pilot", "--format", "md"))
    assert "Pilot" in pilot or "pilot" in pilot

    ok(here("demo", "-n", "6", "--annotators", "0", "--db", server))
    needed = ok(here("power", server, "--study", "hmd"))
    assert needed == ok(here("power", f"{server}?study=hmd"))
    invitations = tmp_path / "invitations.csv"
    ok(here("invite", "--db", server, "-n", "3", "--bot", "lab_bot", "--out", invitations))
    assert len(invitations.read_text().splitlines()) == 4  # a header and three links

    # answers collected elsewhere, in the export's long format, go into another database
    file = tmp_path / "demo.sqlite"
    ok(here("demo", "-n", "6", "--annotators", "0", "--db", file))
    ok(here("export", "--db", file, "--out", tmp_path / "export"))
    elsewhere = postgres.fresh_database()
    csv = tmp_path / "export" / "responses.csv"
    ok(here("import", "responses", csv, "--db", elsewhere, "--study", "hmd"))
    imported = tables(f"{elsewhere}?study=hmd")["responses"]
    assert len(imported) == len(tables(file)["responses"])
    # a study file names the study too: its id is the schema
    study_file = PROJECT_ROOT / "scenarios" / "library" / "studies" / "hmd.yaml"
    another = postgres.fresh_database()
    ok(here("import", "responses", csv, "--db", another, "--study", study_file))
    assert len(tables(f"{another}?study=hmd")["responses"]) == len(imported)


async def ozlab_in_loop(*args: str | Path, cwd: Path) -> tuple[int, str]:
    """``ozlab ARGS`` in a process of its own while this loop serves the emulator: its
    status and stdout (stderr with it when it fails)."""
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", *map(str, args), cwd=cwd, env=environment(),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(child.communicate(), 120)
    assert child.returncode is not None
    return child.returncode, out.decode() + (err.decode() if child.returncode else "")


async def test_a_bot_on_a_server_takes_a_participant_through_and_the_console_follows(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    server = postgres.fresh_database()
    async with BotApiEmulator("123456789:AAE-one-bot-on-a-server-0123456789abc") as telegram:
        ozlab_run = OzlabProcesses(telegram, tmp_path, server)
        try:
            bot = await ozlab_run.start(study="hmd")
            p = telegram.participant(901)
            await consent(p)
            await say(p, "adventure games for linux")
            code, listed = await ozlab_in_loop("wizard", "sessions", "--db", server, cwd=tmp_path)
            assert code == 0, listed
            [line] = listed.splitlines()
            assert "study=hmd" in line and "exchanges=1/" in line
            session = line.split()[0]
            said = await ozlab_in_loop(
                "wizard", "say", session, "Hello from the lab", "--db", server, "--as", "ada",
                cwd=tmp_path,
            )  # fmt: skip
            assert said == (0, f"#1 say {session}: applied\n")
            await p.wait_for_text("Hello from the lab")
            await p.tap(text="Finish task")
            await p.wait_for_text("1/5")
            for n, label in enumerate(("Agree", "Neutral", "Agree", "Disagree"), start=2):
                value = {"Disagree": 2, "Neutral": 3, "Agree": 4}[label]
                await p.tap(text=f"{value} · {label}")
                await p.wait_for_text(f"{n}/5")
            await p.send_text("Fine, thanks.")
            await p.wait_for_text("Thank you for taking part")
            code, listed = await ozlab_in_loop(
                "wizard", "sessions", "--all", "--db", server, cwd=tmp_path
            )
            assert code == 0 and session in listed and "ended" in listed, listed
            assert await bot.terminate() == 0
        finally:
            await ozlab_run.close()
    stored = tables(server)
    assert [(s["state"], s["end_reason"]) for s in stored["sessions"]] == [
        ("ended", "participant_done")
    ]
    assert len(stored["responses"]) == 5
    assert [c["kind"] for c in stored["commands"]] == ["say"]


def test_chat_plays_a_study_on_a_server(postgres: PostgresServer, tmp_path: Path) -> None:
    server = postgres.fresh_database()
    env = {k: v for k, v in environment().items() if k != "OZLAB_SECRET"}
    argv = [sys.executable, "-m", "bot.cli", "chat", "hmd", "--db", server]
    with Terminal(argv, cwd=PROJECT_ROOT, env=env) as chat:
        chat.expect(r"^bot #2: Privacy agreement")
        chat.type("1")
        chat.expect(r"^bot #\d+: Your task")
        chat.type("Hi! I need adventure games for Linux")
        chat.expect(r"Would you like to know more")
        chat.press(b"\x04")
        assert chat.wait() == 0
        assert "Traceback" not in chat.output
    [exchange] = tables(server)["exchanges"]
    assert exchange["user_text"] == "Hi! I need adventure games for Linux"


def test_stress_tests_are_made_and_replayed_on_a_server(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    shops = start_shops(tmp_path, participants=4)
    logged = next(shops)
    try:
        server = postgres.fresh_database()
        ok(here("copy", "--db", logged.played, "--to", server))
        live, played = tables(server), len(logged.relay.calls())
        made = ok(
            here(
                "stress", "generate", "--db", server, "--types", "ST-1,ST-2", "--per-type", "3",
                "--seed", "7",
            )
        )  # fmt: skip
        assert re.search(r"\d+ ST-1, \d+ ST-2", made), made
        ran = ok(here("stress", "run", "--db", server, "--concurrency", "4"))
        assert "Replayed" in ran
        assert any(c.startswith("stress-") for c in logged.relay.calls()[played:])
        again = ok(here("stress", "run", "--db", server))
        assert "Replayed 0 tests" in again
        stress = numbers(server)["stress"]
        assert isinstance(stress, dict) and set(stress) == {"shop-v0", "shop-v1"}
        assert tables(server) == live  # replays are conversations of their own
    finally:
        shops.close()


async def test_a_verbose_bot_on_a_password_role_never_logs_the_password(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    url, superuser, home = password_role_database(postgres, tmp_path)
    async with BotApiEmulator("123456789:AAE-password-role-bot-0123456789abc") as telegram:
        ozlab_run = OzlabProcesses(telegram, tmp_path, url)
        ozlab_run.extra_env = {"HOME": str(home), "PGPASSWORD": "not-" + PASSWORD}
        try:
            refused = await ozlab_run.start("-v", study="hmd", wait_ready=False)
            assert await asyncio.wait_for(refused.finish(), 60) == 5
            assert "password authentication failed" in refused.stderr
            ozlab_run.extra_env["PGPASSWORD"] = PASSWORD
            bot = await ozlab_run.start("-v", study="hmd")
            p = telegram.participant(911)
            await consent(p)
            await say(p, "strategy games for two")
            assert await bot.terminate() == 0
        finally:
            await ozlab_run.close()
    assert " DEBUG " in bot.stderr
    for run in ozlab_run.started:
        assert PASSWORD not in run.stderr
    assert [e["user_text"] for e in tables(superuser)["exchanges"]] == ["strategy games for two"]
