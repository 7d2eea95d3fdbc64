"""``ozlab web``: the experimenters' web page (``lab_web``); ``ozlab web users``: its
accounts. Standard library only at import: aiohttp's page is loaded when it runs."""

from __future__ import annotations

import argparse
import asyncio

from bot.cli.flags import DB_ENV, DB_HELP, database

NAME = "web"
ROLES = ("viewer", "experimenter")


def add(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    web = commands.add_parser(
        NAME,
        help="the experimenters' web page: studies, live sessions, money, results",
        description="Serve the experimenters' web page (docs/web.md). With no account yet,"
        " it prints a one-time link for the first user.",
    )
    database(web, default="ozlab.sqlite", help="study database")
    web.add_argument(
        "--study", help="only this study (its id) of a PostgreSQL database; default: all"
    )
    web.add_argument("--host", default="127.0.0.1", help="address to listen on (default loopback)")
    web.add_argument("--port", type=int, default=8765, help="port (default 8765; 0: any free)")
    web.add_argument(
        "--behind-tls",
        action="store_true",
        help="a reverse proxy serves the page over HTTPS: cookies are marked Secure",
    )
    web.set_defaults(action=None)
    actions = web.add_subparsers(dest="action", metavar="ACTION")
    db_after = argparse.ArgumentParser(add_help=False)  # --db also after the action
    db_after.add_argument(
        "--db", default=argparse.SUPPRESS, help=f"study database, {DB_HELP} (env {DB_ENV})"
    )
    users = actions.add_parser(
        "users", parents=[db_after], help="the page's accounts: add, list, remove"
    )
    users_do = users.add_subparsers(dest="users_action", metavar="ACTION", required=True)
    added = users_do.add_parser(
        "add",
        parents=[db_after],
        help="a one-time sign-in link for a new account (or a new password)",
    )
    added.add_argument("name")
    added.add_argument("--role", choices=ROLES, default="viewer", help="default viewer")
    added.add_argument(
        "--on",
        dest="studies",
        action="append",
        default=[],
        metavar="STUDY",
        help="only on this study (repeat for several; default: every study)",
    )
    added.add_argument(
        "--url", default="http://127.0.0.1:8765", help="the page's address, for the link"
    )
    users_do.add_parser("list", parents=[db_after], help="every account, study and role")
    removed = users_do.add_parser(
        "remove", parents=[db_after], help="remove an account from every study"
    )
    removed.add_argument("name")


def run(args: argparse.Namespace) -> int:
    from bot.core.vocabulary import ExperimenterRole
    from lab_web import serving

    if args.action is None:
        try:
            asyncio.run(
                serving.serve(
                    args.db,
                    study=args.study,
                    host=args.host,
                    port=args.port,
                    behind_tls=args.behind_tls,
                    say=lambda line: print(line, flush=True),
                )
            )
        except KeyboardInterrupt:
            return 0
        return 0
    if args.users_action == "add":
        link = asyncio.run(
            serving.add_user(
                args.db, args.name, ExperimenterRole(args.role), args.studies, args.url
            )
        )
        print(f"{args.name} signs in once, within 24 h, at {link}")
    elif args.users_action == "list":
        for line in asyncio.run(serving.users(args.db)):
            print(line)
    else:
        removed = asyncio.run(serving.remove_user(args.db, args.name))
        print(f"{args.name}: removed from {removed} {'study' if removed == 1 else 'studies'}")
    return 0
