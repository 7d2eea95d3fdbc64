"""The experimenters' page in a real Chromium, beside a real ``ozlab run`` on the emulator:
signing in, a session updated live and ended from the page (the participant is told), a
viewer who cannot act, a forged cross-site form refused, a hostile participant's HTML and
escape sequences shown as text, the report's findings (agreement so far, data-quality flags)
on the overview and the annotation page, axe-core's check, and a phone's width."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from aiohttp import web
from playwright.async_api import Browser, Page, expect

from bot.pilot.emulator import BotApiEmulator, Participant
from tests.browser_support import (
    WebProcess,
    accessibility_findings,
    chromium,
    fresh_context,
    ozlab_web,
    phone_screenshot,
)
from tests.command_line import environment, ozlab
from tests.conftest import consent
from tests.e2e_support import PROJECT_ROOT, OzlabProcesses
from tests.storage_probe import command_log

pytestmark = pytest.mark.slow

PASSWORD = "a long enough password"
HOSTILE = "<img src=x id=pwned onerror=\"document.title='pwned'\"><b>bold</b> \x1b[31mred\x1b[0m"


@dataclass
class Lab:
    web: WebProcess
    browser: Browser
    ozlab: OzlabProcesses
    participant: Participant


@pytest.fixture
async def lab(ozlab: OzlabProcesses, emulator: BotApiEmulator) -> AsyncIterator[Lab]:
    await ozlab.start()
    participant = emulator.participant(7101)
    await consent(participant)
    async with ozlab_web(ozlab.db, ozlab.env()) as served, chromium() as browser:
        yield Lab(served, browser, ozlab, participant)


async def first_user(lab: Lab, page: Page, name: str = "ana") -> None:
    assert lab.web.first_link is not None
    await page.goto(lab.web.first_link)
    await page.fill("#name", name)
    await page.fill("#password", PASSWORD)
    await page.click("text=Save and sign in")
    await page.wait_for_url(f"{lab.web.url}/")


async def the_session(page: Page, lab: Lab) -> str:
    """Open the first participant's session from the study's live table; its address."""
    await page.click("nav >> text=study")
    row = page.locator("#sessions-rows a").first
    await expect(row).to_be_visible(timeout=10_000)
    await row.click()
    await page.wait_for_url("**/session/**")
    return page.url


async def test_a_session_is_watched_live_and_ended_from_the_page(
    lab: Lab, emulator: BotApiEmulator
) -> None:
    async with fresh_context(lab.browser) as context:
        page = await context.new_page()
        await first_user(lab, page)
        await expect(page.locator("main")).to_contain_text("The bot is running.")
        assert await accessibility_findings(page) == []
        await phone_screenshot(page, "overview")
        await page.set_viewport_size({"width": 1280, "height": 800})
        await page.click("nav >> text=study")
        rows = page.locator("#sessions-rows tr")
        await expect(rows).to_have_count(1)
        await page.evaluate("window.stayed = true")  # gone if the page reloads
        await consent(emulator.participant(7102))  # a second participant, live in the table
        await expect(rows).to_have_count(2, timeout=5_000)
        assert await page.evaluate("window.stayed === true")
        await the_session(page, lab)
        await page.evaluate("window.stayed = true")  # gone if the page reloads
        await lab.participant.send_text("Do you have adventure games?")
        line = page.locator("#transcript li", has_text="Do you have adventure games?")
        await expect(line).to_be_visible(timeout=5_000)
        assert await page.evaluate("window.stayed === true")
        assert await accessibility_findings(page) == []
        await page.fill("#text", "Hello from the lab")
        await page.click("text=Send")
        await expect(page.locator(".flash")).to_contain_text("write as the wizard: applied")
        await lab.participant.wait_for_text("Hello from the lab")
        await page.fill("#reason", "the room closes")
        await page.click("text=End the session")
        await expect(page.locator(".flash")).to_contain_text("end the session: applied")
        await lab.participant.wait_for_text("This task is over.")
        await phone_screenshot(page, "session")
        for tab in ("Annotation and judges", "Money", "Results", "Sessions"):
            await page.click(f".tabs >> text={tab}")
            await expect(page.locator("h1")).to_be_visible()
            assert await accessibility_findings(page) == [], tab
            await phone_screenshot(page, tab.split()[0].lower())
    said = [(c["wizard"], c["kind"], c["outcome"]) for c in command_log(lab.ozlab.db)]
    assert said == [("ana", "say", "applied"), ("ana", "end", "applied")]


async def test_a_viewer_reads_and_cannot_act(lab: Lab) -> None:
    code = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "bot.cli", "web", "users", "add", "vi", "--db", str(lab.ozlab.db)),
        "--url",
        lab.web.url,
        stdout=asyncio.subprocess.PIPE,
        env=lab.ozlab.env(),
    )
    out, _ = await code.communicate()
    link = out.decode().split(" at ")[-1].strip()
    async with fresh_context(lab.browser) as context:
        page = await context.new_page()
        await page.goto(link)
        await page.fill("#password", PASSWORD)
        await page.click("text=Save and sign in")
        await page.wait_for_url(f"{lab.web.url}/")
        session = await the_session(page, lab)
        assert await page.locator("form[action$='/end']").count() == 0
        # the viewer forges the experimenter's form from the page itself: refused
        status = await page.evaluate(
            """async (url) => {
                const token = document.querySelector("input[name=csrf_token]").value;
                const body = new URLSearchParams({csrf_token: token, reason: "forged"});
                return (await fetch(url + "/end", {method: "POST", body})).status;
            }""",
            session,
        )
        assert status == 403
    assert command_log(lab.ozlab.db) == []


async def test_a_cross_site_form_is_refused(lab: Lab) -> None:
    async with fresh_context(lab.browser) as context:
        page = await context.new_page()
        await first_user(lab, page)
        session = await the_session(page, lab)
        evil = web.Application()
        form = (
            f'<form method="post" action="{session}/say">'
            '<input name="text" value="forged"><input name="csrf_token" value="guess"></form>'
        )
        page_of_evil = f"<!doctype html><title>evil</title>{form}"

        async def serve(_: web.Request) -> web.Response:
            return web.Response(text=page_of_evil, content_type="text/html")

        evil.router.add_get("/", serve)
        runner = web.AppRunner(evil)
        await runner.setup()
        site = web.TCPSite(runner, "localhost", 0)
        await site.start()
        try:
            port = runner.addresses[0][1]
            other = await context.new_page()
            await other.goto(f"http://localhost:{port}/")
            async with other.expect_response(f"{session}/say") as answered:
                await other.evaluate("document.forms[0].submit()")
            assert (await answered.value).status == 403
        finally:
            await runner.cleanup()
    assert command_log(lab.ozlab.db) == []
    assert not any("forged" in m.text for m in lab.participant.messages)


async def test_a_hostile_participants_html_and_escapes_show_as_text(lab: Lab) -> None:
    async with fresh_context(lab.browser) as context:
        page = await context.new_page()
        await first_user(lab, page)
        await the_session(page, lab)
        title = await page.title()
        await lab.participant.send_text(HOSTILE)
        line = page.locator("#transcript li", has_text="<b>bold</b>")
        await expect(line).to_be_visible(timeout=5_000)
        assert "\\x1b[31mred\\x1b[0m" in await line.inner_text()
        assert await page.locator("#pwned, #transcript b, #transcript img").count() == 0
        assert await page.title() == title
        await page.reload()  # the same, as the page renders it without the live events
        await expect(page.locator("#transcript li", has_text="<b>bold</b>")).to_be_visible()
        assert await page.locator("#pwned, #transcript b, #transcript img").count() == 0


async def test_the_reports_findings_are_readable_on_a_phone(tmp_path: Path) -> None:
    """The report made from the overview's button: the data-quality flags there, and the
    annotators' agreement on the annotation page, both passing axe-core at 390 px."""
    study = PROJECT_ROOT / "scenarios/library/studies/hri-cues.yaml"
    db = tmp_path / "hri.sqlite"
    demo = ozlab("demo", "--study", study, "-n", "4", "--annotators", "3", "--db", db, cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr
    async with (
        ozlab_web(db, environment()) as served,
        chromium() as browser,
        fresh_context(browser) as context,
    ):
        page = await context.new_page()
        assert served.first_link is not None
        await page.goto(served.first_link)
        await page.fill("#name", "ana")
        await page.fill("#password", PASSWORD)
        await page.click("text=Save and sign in")
        await page.wait_for_url(f"{served.url}/")
        await page.click("text=Make the report")
        await expect(page.locator(".flash")).to_contain_text("the report is ready", timeout=60_000)
        await expect(page.locator("main")).to_contain_text("flagged (straight_lining")
        await expect(page.locator("main")).to_contain_text("straight_lining")
        assert await accessibility_findings(page) == []
        await phone_screenshot(page, "overview-findings")
        await page.click("nav >> text=hri")
        await page.click(".tabs >> text=Annotation and judges")
        agreement = page.locator("table", has_text="Agreement between annotators")
        await expect(agreement.locator("td", has_text="alpha_ordinal 0.").first).to_be_visible()
        assert await accessibility_findings(page) == []
        await phone_screenshot(page, "annotation-findings")
