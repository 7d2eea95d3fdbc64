"""JsonClient against real local servers: normal, slow, failing and malformed answers."""

from __future__ import annotations

import asyncio
import logging
import random
import time
import traceback
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from bot.systems.base import SystemFailure
from bot.systems.http_json import JsonClient, Redactor, describe_url, excerpt
from tests.fake_servers import FakeHttp, Mode, closed_port_url, serving

SECRET = "sk-live-0123456789abcdefSECRET"


@pytest.fixture
async def client() -> AsyncIterator[JsonClient]:
    client = JsonClient(backoff=0.01, max_backoff=0.05)
    yield client
    await client.close()


@pytest.fixture
async def server() -> AsyncIterator[FakeHttp]:
    async with FakeHttp(reply={"text": "hi", "n": 1}) as server:
        yield server


async def failure(client: JsonClient, url: str, **kwargs: object) -> str:
    """The message of the SystemFailure a call raises."""
    options: dict[str, object] = {"timeout": 0.5} | kwargs
    with pytest.raises(SystemFailure) as caught:
        await client.post(url, {"message": "hello"}, **options)  # type: ignore[arg-type]
    return str(caught.value)


async def test_posts_json_and_reads_json(client: JsonClient, server: FakeHttp) -> None:
    answer = await client.post(server.endpoint, {"message": "héllo"}, timeout=0.5)
    assert answer == {"text": "hi", "n": 1}
    received = server.last
    assert received.json == {"message": "héllo"}
    assert received.headers["Content-Type"] == "application/json"
    assert received.headers["Accept"] == "application/json"


async def test_session_is_reused_and_close_is_final(server: FakeHttp) -> None:
    client = JsonClient()
    await client.post(server.endpoint, {}, timeout=0.5)
    await client.post(server.endpoint, {}, timeout=0.5)
    await client.close()
    await client.close()  # twice is fine
    assert client.closed
    with pytest.raises(SystemFailure, match="shutting down"):
        await client.post(server.endpoint, {}, timeout=0.5)


async def test_close_without_use_is_fine() -> None:
    await JsonClient().close()


async def test_connection_refused_is_retried_then_reported(client: JsonClient) -> None:
    message = await failure(client, closed_port_url() + "/chat", retries=2)
    assert "connection refused" in message
    assert "after 3 attempts" in message
    assert "127.0.0.1" in message


async def test_slow_system_times_out(client: JsonClient, server: FakeHttp) -> None:
    server.behave(Mode.HOLD)
    started = time.perf_counter()
    message = await failure(client, server.endpoint, timeout=0.2)
    assert time.perf_counter() - started < 1.0  # bounded by the timeout, with room for a slow CI
    assert message == f"no answer from {server.endpoint} within 0.2 s"


async def test_slow_but_in_time_is_fine(client: JsonClient, server: FakeHttp) -> None:
    server.behave(Mode.SLOW, delay=0.05)
    assert await client.post(server.endpoint, {}, timeout=0.5) == {"text": "hi", "n": 1}


async def test_5xx_then_ok_is_retried(client: JsonClient, server: FakeHttp) -> None:
    server.behave(Mode.STATUS, status=503, times=2)
    assert await client.post(server.endpoint, {}, timeout=0.5, retries=2) == {"text": "hi", "n": 1}
    assert len(server.requests) == 3


async def test_5xx_beyond_retries_reports_status_and_excerpt(
    client: JsonClient, server: FakeHttp
) -> None:
    server.behave(Mode.STATUS, status=500, body="database\x00 is\n\n down")
    message = await failure(client, server.endpoint, retries=1)
    assert message == (
        f"{server.endpoint} answered HTTP 500 Internal Server Error: database\\x00 is down "
        "(after 2 attempts)"
    )
    assert len(server.requests) == 2


async def test_4xx_is_never_retried(client: JsonClient, server: FakeHttp) -> None:
    server.behave(Mode.STATUS, status=422, body='{"detail": "message is required"}')
    message = await failure(client, server.endpoint, retries=3)
    assert "HTTP 422" in message
    assert "message is required" in message
    assert len(server.requests) == 1


async def test_long_error_body_is_cut(client: JsonClient, server: FakeHttp) -> None:
    server.behave(Mode.STATUS, status=400, body="x" * 10_000)
    message = await failure(client, server.endpoint)
    assert len(message) < 300
    assert message.endswith("…")


async def test_connection_reset_is_retried(client: JsonClient, server: FakeHttp) -> None:
    server.behave(Mode.RESET, times=1)
    assert await client.post(server.endpoint, {}, timeout=0.5, retries=1) == {"text": "hi", "n": 1}
    server.behave(Mode.RESET)
    message = await failure(client, server.endpoint, retries=1)
    assert "closed the connection without answering" in message


async def test_retries_stop_at_the_overall_timeout(server: FakeHttp) -> None:
    client = JsonClient(backoff=0.1, max_backoff=0.1)
    server.behave(Mode.STATUS, status=500)
    started = time.perf_counter()
    try:
        message = await failure(client, server.endpoint, timeout=0.25, retries=10)
    finally:
        await client.close()
    assert time.perf_counter() - started < 1.0
    assert "HTTP 500" in message
    assert len(server.requests) < 5


async def test_backoff_grows_and_jitter_comes_from_the_rng() -> None:
    plain = JsonClient(backoff=0.1, max_backoff=0.35)
    assert [plain._delay(n) for n in (1, 2, 3, 4)] == [0.1, 0.2, 0.35, 0.35]
    jittery = JsonClient(backoff=0.1, max_backoff=10, rng=random.Random(7))
    again = JsonClient(backoff=0.1, max_backoff=10, rng=random.Random(7))
    delays = [jittery._delay(n) for n in (1, 2, 3)]
    assert delays == [again._delay(n) for n in (1, 2, 3)]
    for n, delay in enumerate(delays, start=1):
        assert 0.05 * 2 ** (n - 1) <= delay < 0.1 * 2 ** (n - 1)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (Mode.MALFORMED, "sent malformed JSON (Unterminated string"),
        (Mode.WRONG_TYPE, "answered with content type text/html, not JSON"),
        (Mode.NON_UTF8, "sent bytes that are not UTF-8 (at byte 13)"),
        (Mode.EMPTY_BODY, "sent an empty answer"),
        (Mode.HUGE, "sent an answer of 5,000,012 bytes, more than the limit of 1,000,000"),
        (Mode.HUGE_STREAM, "sent an answer of more than 1,000,000 bytes"),
    ],
)
async def test_garbage_is_a_clear_failure_and_not_retried(
    client: JsonClient, server: FakeHttp, mode: Mode, expected: str
) -> None:
    server.behave(mode)
    message = await failure(client, server.endpoint, retries=2)
    assert message.startswith(server.endpoint)
    assert expected in message
    assert len(server.requests) == 1


async def test_huge_stream_fails_fast_without_reading_it_all(
    client: JsonClient, server: FakeHttp
) -> None:
    server.behave(Mode.HUGE_STREAM)
    started = time.perf_counter()
    await failure(client, server.endpoint, timeout=2)
    assert time.perf_counter() - started < 1
    assert not server.stream_finished


async def test_limit_is_configurable(server: FakeHttp) -> None:
    client = JsonClient(max_bytes=10)
    try:
        message = await failure(client, server.endpoint)
    finally:
        await client.close()
    assert "more than the limit of 10" in message


async def test_structured_json_content_types_are_json(client: JsonClient) -> None:
    async def handler(request: web.Request) -> web.Response:
        return web.Response(text='{"ok": true}', content_type="application/vnd.api+json")

    app = web.Application()
    app.router.add_post("/", handler)
    async with serving(app) as url:
        assert await client.post(url + "/", {}, timeout=0.5) == {"ok": True}


@pytest.mark.parametrize(
    ("location", "shown"),
    [
        ("https://elsewhere.example/chat?key=abc", "https://elsewhere.example/chat"),
        ("/v2/chat?key=abc", "{base}/v2/chat"),
    ],
)
async def test_redirects_are_not_followed(client: JsonClient, location: str, shown: str) -> None:
    async def handler(request: web.Request) -> web.Response:
        raise web.HTTPMovedPermanently(location)

    app = web.Application()
    app.router.add_post("/", handler)
    async with serving(app) as url:
        message = await failure(client, url + "/")
    assert "HTTP 301" in message
    assert f"redirect to {shown.format(base=url)})" in message
    assert "key=abc" not in message


async def test_secrets_never_reach_messages_or_logs(
    client: JsonClient, server: FakeHttp, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    headers = {"Authorization": f"Bearer {SECRET}", "X-Api-Key": SECRET + "-2"}
    # The server echoes the key back in its error body, as some real ones do.
    server.behave(Mode.STATUS, status=500, body=f"bad key Bearer {SECRET} / {SECRET}-2")
    with pytest.raises(SystemFailure) as caught:
        await client.post(server.endpoint, {}, timeout=0.5, retries=2, headers=headers)
    server.behave(Mode.STATUS, status=401, body=f"Incorrect API key provided: {SECRET}")
    with pytest.raises(SystemFailure) as caught_4xx:
        await client.post(server.endpoint, {}, timeout=0.5, headers=headers)
    server.behave(Mode.HOLD)
    with pytest.raises(SystemFailure) as caught_timeout:
        await client.post(server.endpoint, {}, timeout=0.1, headers=headers)
    server.release()
    assert server.requests[0].headers["Authorization"] == f"Bearer {SECRET}"
    for error in (caught.value, caught_4xx.value, caught_timeout.value):
        shown = "".join(traceback.format_exception(error))
        assert SECRET not in shown
        assert "***" in shown or "no answer" in shown
    assert any("retrying" in r.getMessage() for r in caplog.records)
    for record in caplog.records:
        assert SECRET not in record.getMessage()
        assert SECRET not in repr(record.args)


@pytest.mark.parametrize("at", [180, 195, 2040])
async def test_a_key_cut_by_the_excerpt_is_still_hidden(
    client: JsonClient, server: FakeHttp, at: int
) -> None:
    server.behave(Mode.STATUS, status=400, body="e" * at + SECRET + "e" * 3000)
    headers = {"Authorization": f"Bearer {SECRET}"}
    with pytest.raises(SystemFailure) as caught:
        await client.post(server.endpoint, {}, timeout=0.5, headers=headers)
    shown = str(caught.value)
    for size in range(6, len(SECRET) + 1):
        assert SECRET[:size] not in shown


async def test_a_key_inside_malformed_json_is_hidden(client: JsonClient, server: FakeHttp) -> None:
    server.behave(Mode.MALFORMED)  # its body is {"text": "unfinished
    with pytest.raises(SystemFailure) as caught:
        await client.post(server.endpoint, {}, timeout=0.5, headers={"X-Key": "unfinished"})
    assert "unfinished" not in str(caught.value)


async def test_secret_in_the_address_is_not_shown(client: JsonClient, server: FakeHttp) -> None:
    url = f"http://user:{SECRET}@127.0.0.1:{server.port}/nowhere?api_key={SECRET}"
    message = await failure(client, url)
    assert SECRET not in message
    assert "HTTP 404" in message


async def test_concurrent_calls_share_the_client(client: JsonClient, server: FakeHttp) -> None:
    server.behave(Mode.HOLD)
    calls = [
        asyncio.create_task(client.post(server.endpoint, {"i": i}, timeout=1)) for i in range(20)
    ]
    await server.wait_for_requests(20)
    server.release()
    assert all(a == {"text": "hi", "n": 1} for a in await asyncio.gather(*calls))


def test_helpers() -> None:
    assert describe_url("https://u:p@h.example:8443/v1/x?key=1#f") == "https://h.example:8443/v1/x"
    assert describe_url("not a url") == "the system's address"
    assert excerpt(b"a\x00b\n\n c") == "a\\x00b c"  # controls visible, space folded
    assert excerpt("\x9b2J\u202eevil") == "\\x9b2J\\u202eevil"  # C1 and bidi overrides too
    redact = Redactor({"Authorization": "Bearer abcdefgh", "X-Short": "abc"})
    assert redact("Bearer abcdefgh and abcdefgh, abc") == "*** and ***, abc"
