"""The study store: the roles its clients name (``bot.store.interface``) and the one
opener that picks a backend by the database's URL (``bot.store.opening``)."""

from bot.store.interface import (
    ROLES,
    AnalyticsSnapshot,
    AnnotationPlanning,
    AnnotatorWork,
    ConsoleReadModel,
    ExperimenterAccounts,
    HotPath,
    Imports,
    OperatorTasks,
    Recruitment,
    StoreLifetime,
    StressTests,
    StudyDefinitions,
    StudyStore,
)
from bot.store.opening import Access, open_store, shown_url

__all__ = [
    "ROLES",
    "Access",
    "AnalyticsSnapshot",
    "AnnotationPlanning",
    "AnnotatorWork",
    "ConsoleReadModel",
    "ExperimenterAccounts",
    "HotPath",
    "Imports",
    "OperatorTasks",
    "Recruitment",
    "StoreLifetime",
    "StressTests",
    "StudyDefinitions",
    "StudyStore",
    "open_store",
    "shown_url",
]
