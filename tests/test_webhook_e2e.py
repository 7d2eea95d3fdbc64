"""``ozlab run --webhook``: Telegram posts each update to the bot, which answers 200 only once
the update is in the inbox. Against the Bot API emulator (which posts as Telegram does), with
``ozlab run`` as a researcher starts it; forged posts come from this test over loopback."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.core.errors import StudyDataError, TelegramSetupError
from bot.pilot.emulator import BotApiEmulator
from bot.store.sqlite import SqliteStore
from bot.telegram.webhook import SECRET_ENV, SECRET_HEADER
from tests.conftest import StartBot, consent, free_port, say
from tests.e2e_support import OzlabProcesses
from tests.store_reads import pick, reading

pytestmark = pytest.mark.slow

SECRET = "lab-webhook-secret_0123456789"


def forged_update(update_id: int, user_id: int) -> dict[str, Any]:
    """A private text from a person, as Telegram would post it."""
    user = {"id": user_id, "is_bot": False, "first_name": "Mallory"}
    chat = {"id": user_id, "type": "private", "first_name": "Mallory"}
    message = {"message_id": 1, "from": user, "chat": chat, "date": 0, "text": "/start"}
    return {"update_id": update_id, "message": message}


async def post(url: str, body: Any, headers: dict[str, str] | None = None) -> int:
    async with (
        aiohttp.ClientSession() as session,
        session.post(url, json=body, headers=headers or {}) as response,
    ):
        return response.status


def highest_update_id(db: Path) -> int:
    async def read(store: SqliteStore) -> int:
        return await store.highest_update_id()

    return reading(db, read)


@pytest.mark.parametrize("receiving", ["polling", "webhook"])
async def test_a_forged_update_is_refused_and_nothing_of_it_is_stored(
    emulator: BotApiEmulator, ozlab: OzlabProcesses, receiving: str
) -> None:
    """Only Telegram knows the secret: without it (or with another) the bot answers 403 and
    stores nothing; another path is 404. A bot that polls listens on no port at all."""
    ozlab.extra_env[SECRET_ENV] = SECRET
    port = ozlab.webhook_port or free_port()
    url = f"http://127.0.0.1:{port}/ozlab/hmd"
    bot = await ozlab.start("--verbose")
    p = emulator.participant(7301)
    await consent(p)
    forged = forged_update(10**9, 7302)
    if receiving == "webhook":
        assert await post(url, forged) == 403
        assert await post(url, forged, {SECRET_HEADER: "not-the-secret"}) == 403
        assert await post(url, forged, {SECRET_HEADER: SECRET + "x"}) == 403
        assert await post(url + "/more", forged, {SECRET_HEADER: SECRET}) == 404
        assert await post(f"http://127.0.0.1:{port}/", forged, {SECRET_HEADER: SECRET}) == 404
    else:
        with pytest.raises(aiohttp.ClientConnectionError):
            await post(url, forged)
    await say(p, "adventure games for linux")  # the bot goes on as before
    assert await bot.terminate() == 0
    assert SECRET not in bot.stderr  # never logged, and redacted like the token if it were

    assert highest_update_id(ozlab.db) == max(emulator.created_times) < forged["update_id"]
    assert len(ozlab.participants()) == 1
    assert ozlab.events("update_unreadable") == []
    assert ozlab.pending_updates() == []


async def test_a_body_that_is_no_update_is_taken_and_counted(
    emulator: BotApiEmulator, tmp_path: Path
) -> None:
    """With the secret, a body the bot cannot read is answered 200 (Telegram would post a 4xx
    again and again) and counted as the poller counts an unreadable update; the bot goes on."""
    ozlab = OzlabProcesses(emulator, tmp_path, webhook=True)
    ozlab.extra_env[SECRET_ENV] = SECRET
    try:
        bot = await ozlab.start()
        url = f"http://127.0.0.1:{ozlab.webhook_port}/ozlab/hmd"
        headers = {SECRET_HEADER: SECRET}
        assert await post(url, ["not", "an", "update"], headers) == 200
        assert await post(url, {"update_id": "seven"}, headers) == 200
        assert await post(url, {"update_id": 2**64, "message": {}}, headers) == 200
        p = emulator.participant(7303)
        await consent(p)
        assert await bot.terminate() == 0
    finally:
        await ozlab.close()
    events = [json.loads(e["data"]) for e in ozlab.events("update_unreadable")]
    assert events == [
        {"update_id": None, "error": "UnreadableUpdate"},
        {"update_id": None, "error": "UnreadableUpdate"},
        {"update_id": 2**64, "error": "UnreadableUpdate"},
    ]  # no content kept
    assert highest_update_id(ozlab.db) == max(emulator.created_times)


@pytest.mark.parametrize("receiving", ["webhook"])
async def test_a_redelivered_post_is_handled_once(
    emulator: BotApiEmulator, start_bot: StartBot, receiving: str
) -> None:
    """Telegram may post an update again (it did not hear the 200): answered 200 again, and
    handled once."""
    bot = await start_bot()
    p = emulator.participant(7304)
    await consent(p)
    before = len(p.messages)
    asked = await p.send_text("adventure games for linux")
    await p.wait_for_message_count(before + 1)
    before = len(p.messages)
    emulator.redeliver(asked)
    assert emulator.webhook is not None
    pusher = emulator.webhook
    await emulator.wait_until(
        lambda e: [a for a in pusher.answers if a[0] == asked] == [(asked, 200), (asked, 200)]
    )
    await say(p, "thanks")  # answered after the redelivery: it would have been answered first
    assert len(p.messages) == before + 1
    assert pick(bot.exchanges(), "user_text") == [("adventure games for linux",), ("thanks",)]


async def test_the_webhook_stays_set_on_a_clean_stop_and_polling_deletes_it(
    emulator: BotApiEmulator, tmp_path: Path
) -> None:
    """A stopped bot leaves the webhook set (Telegram keeps what comes meanwhile); the next
    ``ozlab run`` without ``--webhook`` deletes it and polls what waited: nothing lost."""
    by_webhook = OzlabProcesses(emulator, tmp_path, webhook=True)
    polling = OzlabProcesses(emulator, tmp_path)
    try:
        bot = await by_webhook.start()
        p = emulator.participant(7305)
        await consent(p)
        assert await bot.terminate() == 0
        assert emulator.webhook is not None  # still set: Telegram keeps posting
        before = len(p.messages)
        waiting = await p.send_text("adventure games for linux")
        await emulator.wait_until(lambda e: any(a == (waiting, 0) for a in pusher_answers(e)))
        await polling.start()
        await p.wait_for_message_count(before + 1)
        assert emulator.webhook is None and emulator.requests["deleteWebhook"] >= 1
    finally:
        await by_webhook.close()
        await polling.close()
    assert pick(polling.exchanges(), "user_text") == [("adventure games for linux",)]


def pusher_answers(emulator: BotApiEmulator) -> list[tuple[int, int]]:
    return emulator.webhook.answers if emulator.webhook is not None else []


async def run_until_it_stops(ozlab: OzlabProcesses, *flags: str) -> tuple[int, str]:
    """``ozlab run hmd FLAGS`` against the emulator: its status and stderr."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "bot.cli", "run", "hmd", "--db", str(ozlab.db)),
        *("--bot-api-url", ozlab.emulator.server_url, *flags),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        cwd=ozlab.workdir,
        env=ozlab.env(),
    )
    _, err = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode is not None
    return process.returncode, err.decode()


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--webhook", "https://example.org/ozlab/hmd", "--listen", "8443"], "host:port"),
        (["--webhook", "https://example.org/o", "--listen", "127.0.0.1:99999"], "port 1 to"),
        (["--webhook", "https://example.org/o", "--listen", "::1:8443"], "brackets"),
        (["--webhook", "https://example.org/o", "--listen", "a b:8443"], "host name"),
        (["--webhook", "http://example.org/ozlab/hmd"], "https only"),
        (["--webhook", "https://example.org:8080/ozlab/hmd"], "ports 443, 80, 88, 8443"),
        (["--webhook", "https://example.org/ozlab?study=hmd"], "a path, nothing more"),
        (["--webhook", "ftp://example.org/ozlab"], "not an https:// URL"),
    ],
)
async def test_a_wrong_webhook_or_listen_address_is_a_usage_error(
    emulator: BotApiEmulator, tmp_path: Path, flags: list[str], said: str
) -> None:
    code, err = await run_until_it_stops(OzlabProcesses(emulator, tmp_path), *flags)
    assert code == 2
    *_, last = err.splitlines()
    assert last.startswith("ozlab run: error: argument --") and said in last, err
    assert "Traceback" not in err


async def test_listen_alone_or_a_wrong_secret_is_a_wrong_value(
    emulator: BotApiEmulator, tmp_path: Path
) -> None:
    ozlab = OzlabProcesses(emulator, tmp_path)
    code, err = await run_until_it_stops(ozlab, "--listen", "127.0.0.1:8443")
    assert (code, err.strip()) == (
        StudyDataError.exit_code,
        "ozlab: --listen is where a webhook is served: give --webhook URL too",
    )
    ozlab.extra_env[SECRET_ENV] = "spaces are not allowed"
    code, err = await run_until_it_stops(ozlab, "--webhook", "https://example.org/ozlab/hmd")
    assert code == StudyDataError.exit_code == 3
    assert err.strip() == (
        f"ozlab: {SECRET_ENV} must be 1 to 256 letters, digits, _ or - (what Telegram takes)"
    )


async def test_a_port_already_in_use_exits_7_in_one_line(
    emulator: BotApiEmulator, tmp_path: Path
) -> None:
    ozlab = OzlabProcesses(emulator, tmp_path)
    taken = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = taken.sockets[0].getsockname()[1]
    try:
        code, err = await run_until_it_stops(
            ozlab, "--webhook", "https://example.org/ozlab/hmd", "--listen", f"127.0.0.1:{port}"
        )
    finally:
        taken.close()
        await taken.wait_closed()
    assert code == TelegramSetupError.exit_code == 7
    assert err.splitlines()[-1].startswith(
        f"ozlab: cannot listen on 127.0.0.1:{port} for the webhook (Address already in use)"
    ), err
    assert "Traceback" not in err
    assert emulator.webhooks_set == 0  # Telegram is told nothing it cannot reach


async def test_telegram_refusing_the_webhook_exits_7_in_one_line(
    emulator: BotApiEmulator, tmp_path: Path
) -> None:
    """The emulator refuses a host it cannot post to (only this machine), as Telegram refuses
    one it cannot resolve."""
    ozlab = OzlabProcesses(emulator, tmp_path)
    url = "https://example.org/ozlab/hmd"
    code, err = await run_until_it_stops(
        ozlab, "--webhook", url, "--listen", f"127.0.0.1:{free_port()}"
    )
    assert code == TelegramSetupError.exit_code == 7
    assert err.splitlines()[-1] == (
        f"ozlab: Telegram refused the webhook {url}: Bad webhook: failed to resolve host:"
        " name or service not known"
    ), err
    assert "Traceback" not in err


async def test_a_body_nested_too_deeply_is_refused_and_a_hang_up_is_one_line(
    emulator: BotApiEmulator, tmp_path: Path
) -> None:
    """With the secret, JSON nested far deeper than any update (which Telegram never posts)
    is refused with a clear 400, never a 500 that Telegram would post again for ever; a
    sender hanging up in the middle of a body is one warning line, not a traceback."""
    ozlab = OzlabProcesses(emulator, tmp_path, webhook=True)
    ozlab.extra_env[SECRET_ENV] = SECRET
    try:
        bot = await ozlab.start()
        url = f"http://127.0.0.1:{ozlab.webhook_port}/ozlab/hmd"
        headers = {SECRET_HEADER: SECRET, "Content-Type": "application/json"}
        for depth in (100_000, 65):
            deep = "[" * depth + "]" * depth
            async with (
                aiohttp.ClientSession() as session,
                session.post(url, data=deep, headers=headers) as response,
            ):
                assert response.status == 400, (depth, bot.stderr[-2000:])
                assert "nested" in await response.text()
        nested = {"update_id": 10**9, "deep": json.loads("[" * 40 + "]" * 40)}
        assert await post(url, nested, headers) == 200  # deep, but not beyond what is read
        _, writer = await asyncio.open_connection("127.0.0.1", ozlab.webhook_port)
        writer.write(
            b"POST /ozlab/hmd HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + f"{SECRET_HEADER}: {SECRET}\r\nContent-Length: 4096\r\n\r\n".encode()
            + b'{"update_id": 7, "message": {"text": "half'
        )
        await writer.drain()
        writer.close()  # hung up before the rest of the body
        await writer.wait_closed()
        await bot.wait_for_log("hung up", timeout=20)
        p = emulator.participant(7305)
        await consent(p)
        await say(p, "adventure games for linux")  # the bot goes on as before
        assert await bot.terminate() == 0
    finally:
        await ozlab.close()
    assert "Traceback" not in bot.stderr, bot.stderr
    assert len([line for line in bot.stderr.splitlines() if "hung up" in line]) == 1
    assert ozlab.pending_updates() == []
