"""The database schema as an ordered list of migrations; ``PRAGMA user_version`` counts them.

Never edit a migration that has shipped: append a new one. Times are Unix seconds (REAL).
"""

from __future__ import annotations

MIGRATIONS: tuple[str, ...] = (
    # 1: the backbone
    """
    CREATE TABLE participants (
        id          TEXT PRIMARY KEY,      -- pseudonym: keyed hash of the Telegram id
        study_id    TEXT NOT NULL,
        chat_key    TEXT,                  -- the chat id, encrypted; NULL once withdrawn
        consent     TEXT NOT NULL DEFAULT 'pending',  -- pending | accepted | declined
        consent_at  REAL,
        created_at  REAL NOT NULL,
        updated_at  REAL NOT NULL,
        state       TEXT NOT NULL          -- the engine's snapshot (JSON)
    );
    CREATE TABLE sessions (
        id             TEXT PRIMARY KEY,
        participant_id TEXT NOT NULL REFERENCES participants(id),
        study_id       TEXT NOT NULL,
        scenario_id    TEXT NOT NULL,
        system_id      TEXT NOT NULL,
        task_index     INTEGER NOT NULL,
        design         TEXT NOT NULL,
        seed           TEXT NOT NULL,
        state          TEXT NOT NULL,      -- dialogue | questionnaire | ended | abandoned
        started_at     REAL NOT NULL,
        ended_at       REAL,
        end_reason     TEXT,   -- success | exchange_limit | time_limit | participant_done | ...
        success        INTEGER
    );
    CREATE INDEX sessions_by_participant ON sessions(participant_id);
    CREATE TABLE exchanges (
        id          INTEGER PRIMARY KEY,
        session_id  TEXT NOT NULL REFERENCES sessions(id),
        turn        INTEGER NOT NULL,
        user_text   TEXT NOT NULL,
        user_at     REAL NOT NULL,
        system_text TEXT,
        system_at   REAL,
        latency_ms  REAL,
        error       TEXT,
        UNIQUE (session_id, turn)
    );
    CREATE TABLE responses (
        id               INTEGER PRIMARY KEY,
        participant_id   TEXT NOT NULL REFERENCES participants(id),
        session_id       TEXT REFERENCES sessions(id),   -- NULL for post-study items
        scope            TEXT NOT NULL,   -- the session id, or 'study'
        questionnaire_id TEXT NOT NULL,
        item_id          TEXT NOT NULL,
        value            INTEGER,
        label            TEXT,
        text             TEXT,
        status           TEXT NOT NULL,   -- answered | skipped
        shown_at         REAL NOT NULL,
        answered_at      REAL NOT NULL,
        UNIQUE (participant_id, scope, questionnaire_id, item_id)
    );
    CREATE TABLE events (
        id             INTEGER PRIMARY KEY,
        at             REAL NOT NULL,
        participant_id TEXT,
        session_id     TEXT,
        kind           TEXT NOT NULL,
        data           TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX events_by_session ON events(session_id);
    CREATE TABLE inbox (
        update_id   INTEGER PRIMARY KEY,   -- Telegram's: a redelivered update is ignored
        received_at REAL NOT NULL,
        payload     TEXT,                  -- the sanitized update, encrypted; NULL once handled
        handled_at  REAL
    );
    CREATE INDEX inbox_pending ON inbox(update_id) WHERE handled_at IS NULL;
    """,
    # 2: messages committed but maybe not yet delivered when the bot stopped (re-sent at start)
    """
    ALTER TABLE participants ADD COLUMN undelivered TEXT;  -- JSON list of messages, or NULL
    """,
    # 3: the protocol library: exchange-level items, rating tasks, attention checks
    """
    ALTER TABLE responses ADD COLUMN turn INTEGER;        -- exchange-level: the turn rated
    ALTER TABLE responses ADD COLUMN stimulus_id TEXT;    -- rating tasks: the row rated
    ALTER TABLE responses ADD COLUMN attention_ok INTEGER;  -- attention checks: 1 passed, 0 failed
    """,
    # 4: the study definition beside its data, so the database explains itself (codebook)
    """
    CREATE TABLE studies (
        id         INTEGER PRIMARY KEY,
        study_id   TEXT NOT NULL,
        loaded_at  REAL NOT NULL,
        definition TEXT NOT NULL,  -- the study, its scenarios and instruments, as JSON
        digest     TEXT NOT NULL   -- sha256 of the definition: a new row only when it changes
    );
    CREATE INDEX studies_by_id ON studies(study_id, id);
    """,
    # 5: the wizard console: commands from experimenters, gates, who wrote each system line
    """
    CREATE TABLE commands (
        id          INTEGER PRIMARY KEY,
        at          REAL NOT NULL,
        wizard      TEXT NOT NULL,
        kind        TEXT NOT NULL,   -- say | reply | end | success | fail | gate | pause | ...
        session_id  TEXT,            -- NULL for commands about a system or the whole study
        payload     TEXT NOT NULL DEFAULT '{}',
        applied_at  REAL,            -- set once by the bot, in the same transaction as the effect
        outcome     TEXT             -- applied | expired | rejected
    );
    CREATE INDEX commands_pending ON commands(id) WHERE applied_at IS NULL;
    CREATE TABLE gates (
        scope           TEXT PRIMARY KEY,  -- study:<id> | system:<id> | session:<id>
        gated           INTEGER NOT NULL,
        auto_send_after REAL,              -- seconds; NULL: the wizard decides every reply
        wizard          TEXT NOT NULL,
        set_at          REAL NOT NULL
    );
    ALTER TABLE exchanges ADD COLUMN source TEXT;         -- system | edited | wizard
    ALTER TABLE exchanges ADD COLUMN original_text TEXT;  -- what the system said, when edited
    ALTER TABLE exchanges ADD COLUMN wizard TEXT;         -- who sent, edited or wrote it
    """,
)
