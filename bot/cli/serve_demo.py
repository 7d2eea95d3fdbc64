"""``ozlab serve-demo``: the demo shop over HTTP, to try the http adapter against it."""

from __future__ import annotations

import argparse
import asyncio

from bot.cli.arguments import port

NAME = "serve-demo"


def add(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = commands.add_parser(
        NAME, help="serve the demo shop over HTTP, to try the http adapter against it"
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=port, default=8080)
    serve.add_argument("--variant", choices=["v1", "v0"], default="v1")


def run(args: argparse.Namespace) -> int:
    from bot.systems.served_demo import serve_demo

    def started(url: str) -> None:
        print(
            f"The demo shop ({args.variant}) answers POST {url} — in a study file:\n"
            f"  - type: http\n    id: shop-http\n    url: {url}\n"
            "    response: {text: null, messages: messages, events: events,"
            " event_data: event_data}\n"
            "Stop it with Ctrl-C.",
            flush=True,
        )

    asyncio.run(serve_demo(args.host, args.port, args.variant, started=started))
    return 0
