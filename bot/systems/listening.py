"""An aiohttp application listening on an address: the demo shop, the shop as a model, and
the lab's web page start theirs the same way and say where they are."""

from __future__ import annotations

from aiohttp import web


async def listen(runner: web.AppRunner, host: str, port: int) -> str:
    """Serve ``runner`` (set up) on ``host``:``port``; its address, ``http://host:port``
    (an IPv6 host in brackets; with port 0, the port the system chose). ``OSError`` when
    the address cannot be had: each caller says so in its own words."""
    await web.TCPSite(runner, host, port).start()
    bound_host, bound_port = runner.addresses[0][:2]
    shown = f"[{bound_host}]" if ":" in str(bound_host) else bound_host
    return f"http://{shown}:{bound_port}"
