"""The experimenters' accounts of the web page as rows, inside the writer's transaction or
a read: a name and its role on this study, the password's slow hash, the failed sign-ins
that lock an account out for a while, and one-time sign-in links kept as their token's
digest."""

from __future__ import annotations

from bot.core.vocabulary import ExperimenterRole
from bot.store.model import ExperimenterAccount, SignInLink
from bot.store.sql import Sql

_COLUMNS = "name, role, password_hash, failures, locked_until, created_at"


def _account(row: tuple[object, ...]) -> ExperimenterAccount:
    name, role, password_hash, failures, locked_until, created_at = row
    return ExperimenterAccount(
        str(name),
        ExperimenterRole(str(role)),
        str(password_hash),
        int(str(failures)),
        None if locked_until is None else float(str(locked_until)),
        float(str(created_at)),
    )


def save(conn: Sql, name: str, role: ExperimenterRole, password_hash: str, now: float) -> bool:
    """The account with this role and password (a new password ends a lock-out); True when
    the name is new."""
    known = conn.execute("SELECT 1 FROM experimenters WHERE name = ?", (name,)).fetchone()
    conn.execute(
        f"INSERT INTO experimenters ({_COLUMNS}) VALUES (?,?,?,0,NULL,?)"
        " ON CONFLICT(name) DO UPDATE SET role = excluded.role,"
        " password_hash = excluded.password_hash, failures = 0, locked_until = NULL",
        (name, role.value, password_hash, now),
    )
    return known is None


def one(conn: Sql, name: str) -> ExperimenterAccount | None:
    row = conn.execute(f"SELECT {_COLUMNS} FROM experimenters WHERE name = ?", (name,)).fetchone()
    return None if row is None else _account(tuple(row))


def every(conn: Sql) -> list[ExperimenterAccount]:
    return [
        _account(tuple(row))
        for row in conn.execute(f"SELECT {_COLUMNS} FROM experimenters ORDER BY name")
    ]


def remove(conn: Sql, name: str) -> bool:
    return conn.execute("DELETE FROM experimenters WHERE name = ?", (name,)).rowcount > 0


def failed(conn: Sql, name: str, lock_after: int, lock_for: float, now: float) -> float | None:
    """One more failed sign-in; the ``lock_after``-th locks the account for ``lock_for``
    seconds and starts the count again. The time the lock ends, or None."""
    row = conn.execute(
        "UPDATE experimenters SET failures = failures + 1 WHERE name = ? RETURNING failures",
        (name,),
    ).fetchone()
    if row is None or int(row[0]) < lock_after:
        return None
    until = now + lock_for
    conn.execute(
        "UPDATE experimenters SET failures = 0, locked_until = ? WHERE name = ?", (until, name)
    )
    return until


def succeeded(conn: Sql, name: str) -> None:
    conn.execute("UPDATE experimenters SET failures = 0 WHERE name = ?", (name,))


def add_link(
    conn: Sql, token_hash: str, name: str | None, role: ExperimenterRole, expires_at: float
) -> None:
    conn.execute(
        "INSERT INTO sign_in_links (token_hash, name, role, expires_at) VALUES (?,?,?,?)",
        (token_hash, name, role.value, expires_at),
    )


def use_link(conn: Sql, token_hash: str, now: float) -> SignInLink | None:
    """The link, used now if it was neither used nor expired; None otherwise."""
    row = conn.execute(
        "UPDATE sign_in_links SET used_at = ?"
        " WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?"
        " RETURNING name, role, expires_at",
        (now, token_hash, now),
    ).fetchone()
    if row is None:
        return None
    name, role, expires_at = row
    return SignInLink(
        None if name is None else str(name), ExperimenterRole(str(role)), float(expires_at)
    )
