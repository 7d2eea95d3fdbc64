"""Every error ozlab raises on purpose, in one tree (as httpx documents its own)::

    OzlabError                  anything ozlab reports in one line; the CLI catches it once
    ├── StudyFileError          a study, scenario or instrument file is wrong (file, line, field)
    ├── StudyDataError          a value given on the command line or in a file to import is
    │                           wrong (an unknown session, a gate scope, a CSV column)
    ├── SystemSetupError        a system under test cannot be built (an adapter's settings)
    ├── StoreError              the study database cannot be used as it is
    │   └── SchemaError         ...its schema is older or newer than this ozlab
    └── TelegramSetupError      the bot cannot start talking to Telegram (token, server)

Each class has its exit status for the command line (``exit_code``): a supervisor or a
script can tell a broken study file from an unreachable Telegram. A participant never sees
any of these: the runner answers them politely and logs the traceback.
"""

from __future__ import annotations


class OzlabError(Exception):
    """A problem ozlab explains in one line; ``exit_code`` is the CLI's status for it."""

    exit_code = 1


class StudyFileError(OzlabError):
    exit_code = 2


class StudyDataError(OzlabError, ValueError):
    exit_code = 3


class SystemSetupError(OzlabError):
    exit_code = 4


class StoreError(OzlabError):
    exit_code = 5


class SchemaError(StoreError):
    exit_code = 6


class TelegramSetupError(OzlabError):
    exit_code = 7
