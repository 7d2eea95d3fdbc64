"""``ozlab serve-demo``: the demo shop over HTTP, to try the http adapter against it; with
``--openai``, the shop as an OpenAI-compatible model that calls a scenario's tools."""

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
    serve.add_argument("--port", type=port, default=None, help="8080 (8081 with --openai)")
    serve.add_argument("--variant", choices=["v1", "v0"], default="v1")
    serve.add_argument(
        "--openai",
        action="store_true",
        help="serve the shop as an OpenAI-compatible model that calls the scenario's"
        " add_to_wishlist tool, to try an openai system with tools",
    )


def run(args: argparse.Namespace) -> int:
    if args.openai:
        return _serve_model(args)
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

    asyncio.run(
        serve_demo(
            args.host, 8080 if args.port is None else args.port, args.variant, started=started
        )
    )
    return 0


def _serve_model(args: argparse.Namespace) -> int:
    from bot.systems.served_model import serve_model

    def started(url: str) -> None:
        print(
            f"The demo shop ({args.variant}) answers as a model at {url}/v1/chat/completions"
            f" — in a study file:\n  - type: openai\n    id: shop-llm\n    url: {url}\n"
            f"    model: ozlab-demo-shop-{args.variant}\n"
            "It calls a scenario's add_to_wishlist tool. Stop it with Ctrl-C.",
            flush=True,
        )

    asyncio.run(
        serve_model(
            args.host, 8081 if args.port is None else args.port, args.variant, started=started
        )
    )
    return 0
