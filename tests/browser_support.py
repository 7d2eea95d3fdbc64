"""A real browser on the real page: ``ozlab web`` as its own process beside ``ozlab run``
processes on the emulator, and Debian's Chromium driven by Playwright (never a browser of
Playwright's own download). Screenshots go under ``test-artifacts/web`` (or
``$OZLAB_TEST_ARTIFACTS/web``)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, BrowserContext, Page, async_playwright

from tests.e2e_support import PROJECT_ROOT

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
AXE = Path(__file__).with_name("browser") / "axe.min.js"
ARTIFACTS = Path(os.environ.get("OZLAB_TEST_ARTIFACTS", PROJECT_ROOT / "test-artifacts")) / "web"
PHONE = {"width": 390, "height": 844}


@dataclass
class WebProcess:
    """``ozlab web`` running: its address and the first user's one-time link."""

    process: asyncio.subprocess.Process
    url: str
    first_link: str | None


@contextlib.asynccontextmanager
async def ozlab_web(db: Path | str, env: dict[str, str], *extra: str) -> AsyncIterator[WebProcess]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot.cli",
        "web",
        "--db",
        str(db),
        "--port",
        "0",
        *extra,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={k: v for k, v in env.items() if k != "OZLAB_WEB_KEY"},
    )
    assert process.stdout is not None
    try:
        async with asyncio.timeout(30):
            first = (await process.stdout.readline()).decode()
            found = re.search(r" at (http://\S+?)/$", first.strip())
            if found is None:
                assert process.stderr is not None
                said = (await process.stderr.read()).decode()
                raise AssertionError(f"ozlab web did not start: {first}{said}")
            second = (await process.stdout.readline()).decode()
        link = re.search(r"(http://\S+/welcome\?token=\S+)", second)
        yield WebProcess(process, found.group(1), link.group(1) if link else None)
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        await asyncio.wait_for(process.wait(), 15)
    assert process.returncode == 0  # SIGTERM stops it cleanly (what it made is removed)


@contextlib.asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True
        )
        try:
            yield browser
        finally:
            await browser.close()


@contextlib.asynccontextmanager
async def fresh_context(browser: Browser, **options: Any) -> AsyncIterator[BrowserContext]:
    """A context of its own: its own cookies and storage, nothing of another's."""
    context = await browser.new_context(**options)
    try:
        yield context
    finally:
        await context.close()


async def sign_in(page: Page, url: str, name: str, password: str) -> None:
    await page.goto(f"{url}/signin")
    await page.fill("#name", name)
    await page.fill("#password", password)
    await page.click("button[type=submit] >> text=Sign in")
    await page.wait_for_url(f"{url}/")


async def accessibility_findings(page: Page) -> list[dict[str, Any]]:
    """axe-core's serious and critical findings on the page as it is now."""
    await page.evaluate(AXE.read_text())
    result = await page.evaluate("async () => (await axe.run(document)).violations")
    return [v for v in result if v.get("impact") in ("serious", "critical")]


async def phone_screenshot(page: Page, name: str) -> Path:
    """The page at a phone's width, kept as a test artifact; fails if it scrolls sideways."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    await page.set_viewport_size(PHONE)
    path = ARTIFACTS / f"{name}.png"
    await page.screenshot(path=str(path), full_page=True)
    wide = await page.evaluate("document.documentElement.scrollWidth")
    assert wide <= PHONE["width"], f"{name}: {wide} px wide at a phone's {PHONE['width']} px"
    return path
