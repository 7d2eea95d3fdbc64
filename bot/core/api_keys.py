"""An API key for a server ozlab calls (a system, a model judge, a speech engine): only from
the environment variable the study names, never from a file, never shown.

The standard library and ``bot.core`` only: every layer imports it.
"""

from __future__ import annotations

from collections.abc import Mapping

from bot.core.errors import SystemSetupError


def bearer_header(
    who: str, api_key_env: str | None, env: Mapping[str, str], *, whose: str = "the system's"
) -> dict[str, str]:
    """``{"Authorization": "Bearer <key>"}`` from the variable a study names, or nothing.

    A variable that is missing or empty is a :class:`~bot.core.errors.SystemSetupError` at
    start-up (``who`` names what needs it); the message names the variable, never a value.
    """
    if api_key_env is None:
        return {}
    key = env.get(api_key_env, "").strip()
    if not key:
        state = "is empty" if api_key_env in env else "is not set"
        raise SystemSetupError(
            f"{who}: the environment variable {api_key_env} (api_key_env) {state}; set it to"
            f" {whose} API key before starting the bot",
            field="api_key_env",
        )
    return {"Authorization": f"Bearer {key}"}
