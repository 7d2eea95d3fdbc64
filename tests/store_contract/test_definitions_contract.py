"""StudyDefinitions: the latest definition of each study, kept once, its keys masked."""

from __future__ import annotations

from bot.store.interface import StudyStore


async def test_the_latest_definition_of_each_study_is_kept_with_keys_masked(
    store: StudyStore,
) -> None:
    secret = '{"study": {"systems": [{"id": "a", "headers": {"Authorization": "Bearer x"}}]}}'
    assert await store.record_definition("s", '{"v": 1}') is True
    assert await store.record_definition("s", '{"v": 1}') is False
    assert await store.record_definition("s", secret) is True
    assert await store.record_definition("t", '{"v": 3}') is True
    definitions = await store.latest_definitions()
    assert definitions["t"] == '{"v": 3}'
    assert "Bearer" not in definitions["s"] and '"Authorization": "***"' in definitions["s"]
