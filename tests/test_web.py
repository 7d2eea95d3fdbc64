"""``ozlab web`` without a browser: accounts, sign-in links, the lock-out, the session
cookie, CSRF and Origin checks, roles, security headers and escaping, through aiohttp's
test client against a real SQLite study."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import stat
from pathlib import Path

import pytest

from bot.cli import main
from bot.core.errors import StudyDataError
from bot.core.participants import ParticipantStatus
from bot.core.vocabulary import ExperimenterRole, Stage
from bot.pilot.demo import play_study
from bot.store import open_store
from bot.store.definition import definition_json
from lab_web import safety
from lab_web.accounts import LOCK_AFTER
from lab_web.cookie_key import KEY_ENV, cookie_key
from lab_web.held import RESULTS
from lab_web.pages import EVENTS_TIMEOUT, NO_BOT_WORDS
from lab_web.serving import loopback
from scenarios.models import Design, StudyBundle
from tests.command_line import ozlab
from tests.e2e_support import PROJECT_ROOT
from tests.postgres_server import PostgresServer
from tests.storage_probe import command_log
from tests.store_contract.records import EXCHANGE, give, ready, session, step
from tests.web_support import HOSTILE, PASSWORD, as_viewer, csrf_of, made_study, page, with_account

VIEWER, EXPERIMENTER = ExperimenterRole.VIEWER, ExperimenterRole.EXPERIMENTER


@pytest.fixture(scope="module")
def study_made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The study, made once: each test gets a copy of its file, to change as it likes."""
    path = tmp_path_factory.mktemp("made") / "study.sqlite"
    asyncio.run(made_study(path))
    return path


@pytest.fixture
def db(tmp_path: Path, study_made: Path) -> Path:
    path = tmp_path / study_made.name
    shutil.copyfile(study_made, path)
    return path


async def test_the_first_users_link_signs_in_once(db: Path) -> None:
    async with page(db) as p:
        token = await p.accounts.invite(None, EXPERIMENTER)
        form = {"token": token, "name": "ana", "password": PASSWORD}
        status, shown = await p.post("/welcome", form)
        assert status == 200 and "Studies" in shown and "ana" in shown
        await p.client.post("/signout", data={"csrf_token": csrf_of(shown)})
        status, shown = await p.post("/welcome", {**form, "name": "eve"})
        assert status == 400 and "used already" in shown
        accounts = await p.lab["study"].store.experimenters()
        assert [(a.name, a.role) for a in accounts] == [("ana", EXPERIMENTER)]
        assert accounts[0].password_hash.startswith("$argon2id$")
        assert PASSWORD not in accounts[0].password_hash


async def test_the_page_as_deployed_hashes_by_rfc_9106_and_reads_a_hash_of_any_parameters(
    db: Path,
) -> None:
    """``ozlab web`` hashes a new password with RFC 9106's low-memory profile, whatever the
    unit tests use; a hash made with other parameters still signs in, as argon2 reads them
    from the hash itself."""
    async with page(db) as tested:
        await with_account(tested.accounts, "bo", VIEWER)
    async with page(db, deployed=True) as p:
        token = await p.accounts.invite(None, EXPERIMENTER)
        form = {"token": token, "name": "ana", "password": PASSWORD}
        assert (await p.post("/welcome", form))[0] == 200
        made = {a.name: a.password_hash for a in await p.lab["study"].store.experimenters()}
        assert made["ana"].startswith("$argon2id$v=19$m=65536,t=3,p=4$")
        assert made["bo"].startswith("$argon2id$v=19$m=8,t=1,p=1$")
        status, shown = await p.sign_in("bo", "wrong password!")
        assert status == 401 and "wrong name or password" in shown
        status, shown = await p.sign_in("bo")
        assert status == 200 and "Studies" in shown and "<span>bo</span>" in shown


async def test_a_short_password_or_a_wrong_name_is_refused_and_the_link_kept(db: Path) -> None:
    async with page(db) as p:
        token = await p.accounts.invite(None, EXPERIMENTER)
        form = {"token": token, "name": "ana", "password": "short"}
        status, shown = await p.post("/welcome", form)
        assert status == 400 and "at least 10 characters" in shown
        status, shown = await p.post("/welcome", {**form, "name": " ", "password": PASSWORD})
        assert status == 400 and "a name has 1 to 64 printable characters" in shown
        status, shown = await p.post("/welcome", {**form, "password": PASSWORD})
        assert status == 200 and "ana" in shown
        named = await p.accounts.invite("bo", VIEWER)
        form = {"token": named, "name": "someone else", "password": PASSWORD}
        assert (await p.post("/welcome", form))[0] == 200
        accounts = await p.lab["study"].store.experimenters()
        assert [(a.name, a.role) for a in accounts] == [("ana", EXPERIMENTER), ("bo", VIEWER)]


async def test_nobody_signed_in_sees_nothing_but_the_sign_in(db: Path) -> None:
    async with page(db) as p:
        response = await p.client.get("/", allow_redirects=False)
        assert response.status == 303 and response.headers["Location"] == "/signin"
        response = await p.client.get("/s/study/events", headers={"Accept": "text/event-stream"})
        assert response.status == 403
        status, _ = await p.post("/s/study/session/p-1/end", {"reason": "x"})
        assert status == 403
    assert command_log(db) == []


async def test_the_page_stops_at_once_while_pages_watch_live(db: Path) -> None:
    """A stop (SIGTERM, Ctrl-C) ends the live streams a page holds open, rather than
    waiting for their next ping: a supervisor's restart is not held up by an open tab."""
    async with as_viewer(db) as p:
        streams = [
            await p.client.get(path, headers={"Accept": "text/event-stream"})
            for path in ("/s/study/events", "/s/study/session/p-1/events")
        ]
        for stream in streams:
            assert stream.status == 200
            assert (await stream.content.readline()).startswith(b"event: ")
        async with asyncio.timeout(EVENTS_TIMEOUT / 3):
            await p.client.server.close()


async def test_repeated_failures_lock_the_account_even_for_the_right_password(db: Path) -> None:
    async with page(db) as p:
        await with_account(p.accounts, "ana", EXPERIMENTER)
        for _ in range(LOCK_AFTER):
            status, shown = await p.sign_in("ana", "wrong password!")
            assert status == 401 and "wrong name or password" in shown
        status, shown = await p.sign_in("ana")
        assert status == 401 and "too many failed sign-ins: try again in 15 min" in shown
        status, shown = await p.sign_in("nobody")
        assert status == 401 and "wrong name or password" in shown


async def test_the_session_cookie_is_sealed_http_only_and_same_site(db: Path) -> None:
    for secure in (False, True):
        async with page(db, secure=secure) as p:
            await with_account(p.accounts, "ana", EXPERIMENTER)
            signin = await p.client.get("/signin")
            first = signin.headers["Set-Cookie"]
            assert ("Strict-Transport-Security" in signin.headers) is secure
            assert "HttpOnly" in first and "SameSite=Strict" in first
            assert ("Secure" in first) is secure
            if secure:  # a Secure cookie never comes back over plain HTTP: nothing goes through
                status, _ = await p.sign_in("ana")
                assert status == 403
                continue
            response = await p.client.post(
                "/signin",
                data={"name": "ana", "password": PASSWORD, "csrf_token": await p.token()},
                headers={"Origin": p.origin},
                allow_redirects=False,
            )
            cookie = response.headers["Set-Cookie"]
            assert response.status == 303 and "HttpOnly" in cookie and "SameSite=Strict" in cookie
            assert "ana" not in cookie  # encrypted, not only signed


async def test_an_action_without_the_token_or_from_another_site_is_refused(db: Path) -> None:
    async with page(db) as p:
        await with_account(p.accounts, "ana", EXPERIMENTER)
        await p.sign_in("ana")
        status, shown = await p.post("/s/study/session/p-1/end", {"reason": "x"}, csrf=False)
        assert status == 403 and "stale or forged" in shown
        token = await p.token()
        for origin in ("https://evil.example", "null"):
            response = await p.client.post(
                "/s/study/session/p-1/end",
                data={"reason": "x", "csrf_token": token},
                headers={"Origin": origin},
            )
            assert response.status == 403
        response = await p.client.post(
            "/s/study/session/p-1/end",
            data={"reason": "x", "csrf_token": token},
            headers={"Sec-Fetch-Site": "cross-site"},
        )
        assert response.status == 403
        assert command_log(db) == []
        status, shown = await p.post("/s/study/session/p-1/end", {"reason": "enough"})
        assert status == 200 and f"end the session: {NO_BOT_WORDS}" in shown
    [command] = command_log(db)
    assert command["wizard"] == "ana" and command["kind"] == "end"
    assert command["session_id"] == "p-1" and command["payload"] == {"reason": "enough"}


async def test_a_viewer_reads_and_cannot_act(db: Path) -> None:
    async with as_viewer(db) as p:
        shown = await (await p.client.get("/s/study/session/p-1")).text()
        assert "p-1" in shown and "End the session" not in shown
        for action, form in (("end", {"reason": "x"}), ("say", {"text": "hi"}), ("pause", {})):
            status, said = await p.post(f"/s/study/session/p-1/{action}", form)
            assert status == 403 and "viewer" in said
        status, _ = await p.post("/s/study/gate", {"scope": "study:s", "state": "on"})
        assert status == 403
    assert command_log(db) == []


async def test_an_unknown_session_is_said_and_nothing_written(db: Path) -> None:
    async with page(db) as p:
        await with_account(p.accounts, "ana", EXPERIMENTER)
        await p.sign_in("ana")
        status, shown = await p.post("/s/study/session/nope/say", {"text": "hi"})
        assert status == 200 and "no session &#39;nope&#39;" in shown
    assert command_log(db) == []


async def test_outside_text_is_shown_as_text_and_no_script_is_inline(db: Path) -> None:
    async with page(db) as p:
        await with_account(p.accounts, "ana", EXPERIMENTER)
        await p.sign_in("ana")
        for path in ("/", "/s/study/", "/s/study/session/p-1", "/signin"):
            response = await p.client.get(path)
            shown = await response.text()
            csp = response.headers["Content-Security-Policy"]
            assert "script-src 'self'" in csp and "unsafe-inline" not in csp
            assert response.headers["X-Frame-Options"] == "DENY"
            scripts = re.findall(r"<script\b[^>]*>", shown)
            assert all(' src="/static/' in s for s in scripts) and "<img" not in shown
            tags = re.findall(r"<[^>]*>", shown)
            assert not [t for t in tags if re.search(r"\son[a-z]+=", t)]
        transcript = await (await p.client.get("/s/study/session/p-1")).text()
        assert "\x1b" not in transcript and "\\x1b[2J" in transcript
        assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&lt;img src=x" in transcript
        assert HOSTILE[:8] not in transcript


async def test_a_removed_account_is_signed_out_at_its_next_request(db: Path) -> None:
    async with page(db) as p:
        await with_account(p.accounts, "ana", EXPERIMENTER)
        await p.sign_in("ana")
        assert (await p.client.get("/", allow_redirects=False)).status == 200
        await p.lab["study"].store.remove_experimenter("ana")
        assert (await p.client.get("/", allow_redirects=False)).status == 303


def test_the_cookie_key_comes_from_the_environment_or_a_private_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    db = str(tmp_path / "study.sqlite")
    made = cookie_key(db)
    kept = tmp_path / "study.sqlite.web-key"
    assert len(made) == 32 and stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert cookie_key(db) == made
    os.chmod(kept, 0o644)
    with pytest.raises(StudyDataError, match="may be read by others"):
        cookie_key(db)
    monkeypatch.setenv(KEY_ENV, "too short")
    with pytest.raises(StudyDataError, match="32 bytes"):
        cookie_key(db)


def test_users_are_added_by_a_link_listed_and_removed(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["web", "users", "add", "ana", "--role", "experimenter", "--db", str(db)]) == 0
    said = capsys.readouterr().out
    assert re.fullmatch(
        r"ana signs in once, within 24 h, at http://127\.0\.0\.1:8765/welcome\?token=\S+&name=ana\n",
        said,
    )
    assert main(["web", "users", "list", "--db", str(db)]) == 0
    assert capsys.readouterr().out == ""  # not an account until the link is used
    assert main(["web", "users", "add", "bo", "--on", "other", "--db", str(db)]) == 3
    assert "no study 'other' here" in capsys.readouterr().err


async def test_a_lab_server_serves_each_study_with_its_own_roles(
    postgres: PostgresServer,
) -> None:
    url = postgres.fresh_database()
    for study in ("alpha", "beta"):
        await made_study(f"{url}?study={study}")
    async with page(url) as p:
        assert sorted(p.lab.studies) == ["alpha", "beta"]
        for role, study in ((EXPERIMENTER, "alpha"), (VIEWER, "beta")):
            token = await p.accounts.invite("ana", role, [study])
            await p.accounts.welcome(token, "ana", PASSWORD)
        await p.sign_in("ana")
        shown = await (await p.client.get("/")).text()
        assert 'href="/s/alpha/"' in shown and 'href="/s/beta/"' in shown
        status, said = await p.post("/s/beta/session/p-1/pause", {})
        assert status == 403 and "viewer" in said
        status, said = await p.post("/s/alpha/session/p-1/pause", {})
        assert status == 200 and f"pause the session: {NO_BOT_WORDS}" in said
        store = p.lab["alpha"].store
        assert [o for o in (await store.command_outcomes([1])).values()] == [None]
        assert await p.lab["beta"].store.command_outcomes([1]) == {}


async def test_annotators_progress_and_the_money_are_shown(tmp_path: Path) -> None:
    db = tmp_path / "work.sqlite"
    store = await open_store(db)
    try:
        await ready(store)
        await give(store, "hri", ("p-1#1", EXCHANGE, "A-1"), ("p-1#2", EXCHANGE, "A-1"))
    finally:
        await store.close()
    async with as_viewer(db) as p:
        shown = await (await p.client.get("/s/work/annotation")).text()
        assert re.search(r"<td>hri</td><td>A-1</td><td>0 of 2</td>", shown)
        assert "<td>joined</td>" in shown and "No judge has run." in shown
        shown = await (await p.client.get("/s/work/money")).text()
        assert "Nobody came from a platform." in shown
        assert re.search(r"<dt>Completed, to be approved</dt><dd>0</dd>", shown)


@pytest.mark.slow
async def test_the_report_and_exports_are_made_by_a_worker_and_kept_until_the_data_changes(
    tmp_path: Path, hmd: StudyBundle
) -> None:
    db = tmp_path / "played.sqlite"
    await play_study(hmd, db, participants=2, seed=1)
    async with as_viewer(db) as p:  # reading the results is a viewer's right
        status, shown = await p.post("/s/played/results/report", {})
        assert status == 200 and "the report is ready" in shown and "<iframe" in shown
        response = await p.client.get("/s/played/report.html")
        assert response.headers["Content-Security-Policy"] == safety.REPORT_CSP
        assert "report generated" in await response.text()  # its provenance line
        results = p.client.app[RESULTS]["played"]
        made = await results.current("report")
        assert made is not None and await results.build("report") is made  # kept
        status, shown = await p.post("/s/played/results/exports", {})
        names = re.findall(r'href="/s/played/exports/([^"]+)"', shown)
        assert status == 200 and "sessions.csv" in names
        download = await p.client.get("/s/played/exports/sessions.csv")
        assert download.headers["Content-Disposition"] == ('attachment; filename="sessions.csv"')
        assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in made.folder.iterdir())
        await p.lab["played"].store.commit_step(step("q", *session("q")))
        assert await results.current("report") is None and not made.folder.exists()
        assert (await p.client.get("/s/played/report.html")).status == 404


def test_only_loopback_addresses_count_as_private() -> None:
    assert all(loopback(h) for h in ("127.0.0.1", "127.8.9.1", "::1", "localhost"))
    assert not any(loopback(h) for h in ("0.0.0.0", "::", "192.168.1.20", "lab.example.org"))


async def test_the_overview_says_each_systems_last_hour(db: Path) -> None:
    async with as_viewer(db) as p:
        shown = await (await p.client.get("/")).text()
        assert "<td>sys</td><td>1</td><td>0</td><td>5</td><td>5</td>" in shown
        assert "No bot is running on this study." in shown
        assert re.search(r"<dt>Participants</dt><dd>1</dd>", shown)


async def test_each_design_cell_is_shown_against_the_quota(
    tmp_path: Path, hmd: StudyBundle
) -> None:
    """The desk's progress of the design's cells, on the overview and the money page: a
    cell is full when those completed and under way take its places."""
    db = tmp_path / "quota.sqlite"
    study = hmd.study.model_copy(update={"design": Design(type="balanced", quota=2)})
    cells = [s.id for s in study.systems]
    assert len(cells) == 2
    store = await open_store(db)
    try:
        await store.record_definition("s", definition_json(hmd.model_copy(update={"study": study})))
        stands = [
            (cells[0], Stage.FINISHED),
            (cells[0], Stage.DIALOGUE),
            (cells[1], Stage.FINISHED),
        ]
        stands += [(cells[1], Stage.CLOSED)]  # a drop-out gives their place back
        for n, (cell, stage) in enumerate(stands):
            status = ParticipantStatus(stage, 1.0, cell=cell, abandoned=stage is Stage.CLOSED)
            await store.commit_step(step(f"p{n}", *session(f"p{n}"), status=status))
    finally:
        await store.close()
    async with as_viewer(db) as p:
        for path in ("/", "/s/quota/money"):
            shown = await (await p.client.get(path)).text()
            assert "Quota of each design cell" in shown
            rows = re.findall(
                r"<tr><td>([^<]+)</td><td>(\d+) of 2</td><td>(\d+)</td><td>(\w+)</td></tr>", shown
            )
            assert rows == [(cells[0], "1", "1", "full"), (cells[1], "1", "0", "open")]


async def test_without_a_quota_no_cell_is_said_full(db: Path) -> None:
    async with as_viewer(db) as p:
        for path in ("/", "/s/study/money"):
            assert "Quota of each design cell" not in await (await p.client.get(path)).text()


async def test_agreement_onboarding_and_flags_wait_for_a_report_of_the_present_data(
    db: Path,
) -> None:
    async with as_viewer(db) as p:
        shown = await (await p.client.get("/s/study/annotation")).text()
        assert "come from the report, which a worker makes" in shown
        assert '<input type="hidden" name="back" value="/s/study/annotation">' in shown
        shown = await (await p.client.get("/")).text()
        assert "The flags come from the report" in shown
        assert '<input type="hidden" name="back" value="/">' in shown


def _figure(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"


@pytest.mark.slow
async def test_agreement_and_data_quality_flags_are_the_reports(tmp_path: Path) -> None:
    """A rating job's agreement so far on the annotation page, the data-quality flags on the
    overview: both as the JSON report the worker made says, until the data changes."""
    study = PROJECT_ROOT / "scenarios/library/studies/hri-cues.yaml"
    db = tmp_path / "hri.sqlite"
    demo = ozlab("demo", "--study", study, "-n", "4", "--annotators", "3", "--db", db, cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr
    async with as_viewer(db) as p:
        status, shown = await p.post("/s/hri/results/report", {"back": "/s/hri/annotation"})
        assert status == 200 and "the report is ready" in shown and "annotation and judges" in shown
        made = await p.client.app[RESULTS]["hri"].current("report")
        assert made is not None
        report = json.loads((made.folder / "report.json").read_text(encoding="utf-8"))
        pooled = [r for r in report["reliability"] if r["reported"] and r["system"] is None]
        assert pooled  # three annotators rated every exchange of the job
        for r in pooled:
            row = (
                f"<tr><td>{r['job']}</td><td>{r['item']} ({r['level']})</td>"
                f"<td>{r['statistic']} {_figure(r['value'])} "
                f"({_figure(r['ci_low'])} to {_figure(r['ci_high'])})</td>"
                f"<td>{r['n_targets']}, {r['n_annotators']}</td></tr>"
            )
            assert row in shown
        assert shown.count("<td>alpha_") == len(pooled)

        shown = await (await p.client.get("/")).text()
        flagged = report["quality"]["participants"]
        assert flagged  # a simulated participant gave one answer to every item
        people = "participant" if len(flagged) == 1 else "participants"
        assert f"{len(flagged)} {people} flagged (" in shown
        for r in flagged:
            assert f"<td>{r['participant_id']} (simulated)</td><td>{r['flags']}</td>" in shown
        for rule in report["quality"]["rules"].values():
            assert rule in shown

        status, shown = await p.post("/s/hri/results/report", {"back": "https://evil.example/"})
        assert status == 200 and "hri: results" in shown  # elsewhere than the page's own: no
        await p.lab["hri"].store.commit_step(step("q", *session("q")))
        shown = await (await p.client.get("/s/hri/annotation")).text()
        assert "come from the report, which a worker makes" in shown


@pytest.mark.slow
async def test_each_annotators_onboarding_and_agreement_with_the_majority_are_the_reports(
    tmp_path: Path,
) -> None:
    """An ACUTE-Eval job's onboarding pairs and each rater's agreement with the majority."""
    db = tmp_path / "acute.sqlite"
    demo = ozlab("demo", "-n", "4", "--annotators", "2", "--db", db, cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr
    async with as_viewer(db) as p:
        status, shown = await p.post("/s/acute/results/report", {"back": "/s/acute/annotation"})
        assert status == 200 and "the report is ready" in shown
        made = await p.client.app[RESULTS]["acute"].current("report")
        assert made is not None
        pairwise = json.loads((made.folder / "report.json").read_text(encoding="utf-8"))["pairwise"]
        assert len(pairwise["onboarding"]) == 2 and pairwise["raters"]
        for o in pairwise["onboarding"]:
            passed = "yes" if o["passed"] else "no"
            row = f"<tr><td>{o['rater']}</td><td>{o['pairs']}</td><td>{o['correct']}</td>"
            assert f"{row}<td>{o['rate']:.0%}</td><td>{passed}</td></tr>" in shown
        for r in pairwise["raters"]:
            agreement = "–" if r["agreement"] is None else f"{r['agreement']:.0%}"
            row = f"<tr><td>{r['question']}</td><td>{r['rater']}</td><td>{r['rater_kind']}</td>"
            row += f"<td>{r['votes']}</td>"
            assert f"{row}<td>{r['scored']}</td><td>{agreement}</td></tr>" in shown
        assert "Onboarding: onboarding pairs with a known answer" in shown
