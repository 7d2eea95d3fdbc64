"""The database schema as an ordered list of migrations; ``PRAGMA user_version`` counts them.

Never edit a migration that has shipped: append a new one. Times are Unix seconds (REAL).
Each migration runs inside the one transaction that brings a file up to date.
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
    # 6: one vocabulary: what the engine's snapshot and the scopes used to encode, as columns
    """
    -- The read model of the console: where each participant stands (written with every step).
    ALTER TABLE participants ADD COLUMN origin TEXT NOT NULL DEFAULT 'telegram';  -- | import
    ALTER TABLE participants ADD COLUMN stage TEXT;           -- NULL for imported participants
    ALTER TABLE participants ADD COLUMN last_activity_at REAL;
    ALTER TABLE participants ADD COLUMN session_id TEXT;      -- the current (or next) session
    ALTER TABLE participants ADD COLUMN scenario_id TEXT;
    ALTER TABLE participants ADD COLUMN system_id TEXT;
    ALTER TABLE participants ADD COLUMN session_started_at REAL;
    ALTER TABLE participants ADD COLUMN exchanges INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE participants ADD COLUMN turns INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE participants ADD COLUMN pending_message TEXT;
    ALTER TABLE participants ADD COLUMN held_texts TEXT;      -- JSON list; NULL: nothing held
    ALTER TABLE participants ADD COLUMN held_since REAL;
    ALTER TABLE participants ADD COLUMN held_auto_send_at REAL;
    ALTER TABLE participants ADD COLUMN paused INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE participants ADD COLUMN gated INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE participants ADD COLUMN gate_auto_send REAL;
    ALTER TABLE participants ADD COLUMN reminded INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE participants ADD COLUMN abandoned INTEGER NOT NULL DEFAULT 0;
    -- Answers say when they were asked, where they came from and, imported, what they rate.
    ALTER TABLE responses ADD COLUMN moment TEXT;  -- screening | post_task | post_study | ...
    ALTER TABLE responses ADD COLUMN origin TEXT NOT NULL DEFAULT 'telegram';  -- | import
    ALTER TABLE responses ADD COLUMN system_id TEXT;  -- imported answers: the system rated
    -- One sequence orders every line of a transcript the way it was committed.
    CREATE TABLE sequence (
        id    INTEGER PRIMARY KEY CHECK (id = 1),
        value INTEGER NOT NULL
    );
    ALTER TABLE exchanges ADD COLUMN user_seq INTEGER;
    ALTER TABLE exchanges ADD COLUMN system_seq INTEGER;
    ALTER TABLE events ADD COLUMN seq INTEGER;
    ALTER TABLE sessions ADD COLUMN end_seq INTEGER;

    -- Imported answers were marked by their scope, import:SYSTEM|SCOPE.
    UPDATE responses SET origin = 'import',
        system_id = CASE WHEN instr(scope, '|') > 8
                         THEN nullif(substr(scope, 8, instr(scope, '|') - 8), '') END
        WHERE scope LIKE 'import:%';
    -- The moment, by the rule analytics applied to the columns an answer has.
    UPDATE responses SET moment = CASE
        WHEN session_id IS NULL AND EXISTS (
            SELECT 1 FROM studies AS s,
                json_each(CASE WHEN json_valid(s.definition) THEN s.definition ELSE '{}' END,
                          '$.study.screening') AS j
            WHERE j.value = responses.questionnaire_id) THEN 'screening'
        WHEN turn IS NOT NULL THEN 'exchange'
        WHEN stimulus_id IS NOT NULL THEN 'rating'
        WHEN session_id IS NOT NULL THEN 'post_task'
        ELSE 'post_study' END;
    -- Participants who answered on paper had a made-up, finished engine state: none now.
    UPDATE participants SET origin = 'import', state = '{}'
        WHERE chat_key IS NULL
          AND json_valid(state)
          AND json_extract(state, '$.stage') = 'finished'
          AND json_extract(state, '$.started_at') = json_extract(state, '$.last_activity_at')
          AND NOT EXISTS (SELECT 1 FROM sessions WHERE participant_id = participants.id)
          AND EXISTS (SELECT 1 FROM responses
                      WHERE participant_id = participants.id AND origin = 'import')
          AND NOT EXISTS (SELECT 1 FROM responses
                          WHERE participant_id = participants.id AND origin = 'telegram');
    -- The read model, from the engine's snapshot as it stood.
    UPDATE participants SET
        stage = json_extract(state, '$.stage'),
        last_activity_at = coalesce(json_extract(state, '$.last_activity_at'), updated_at),
        session_id = CASE WHEN json_array_length(state, '$.tasks') > 0
            THEN id || '-' || (coalesce(json_extract(state, '$.task_index'), 0) + 1) END,
        scenario_id = json_extract(state, '$.tasks['
            || coalesce(json_extract(state, '$.task_index'), 0) || '].scenario_id'),
        system_id = json_extract(state, '$.tasks['
            || coalesce(json_extract(state, '$.task_index'), 0) || '].system_id'),
        session_started_at = nullif(json_extract(state, '$.session_started_at'), 0),
        exchanges = coalesce(json_extract(state, '$.exchanges'), 0),
        turns = coalesce(json_extract(state, '$.turns'), 0),
        pending_message = json_extract(state, '$.pending_message'),
        held_texts = CASE WHEN json_type(state, '$.waiting') = 'object'
            THEN json_extract(state, '$.waiting.texts') END,
        held_since = CASE WHEN json_type(state, '$.waiting') = 'object'
            THEN json_extract(state, '$.waiting.since') END,
        held_auto_send_at = CASE WHEN json_type(state, '$.waiting') = 'object'
            THEN json_extract(state, '$.waiting.auto_send_at') END,
        paused = coalesce(json_extract(state, '$.paused'), 0),
        gated = coalesce(json_extract(state, '$.gated'), 0),
        gate_auto_send = json_extract(state, '$.gate_auto_send'),
        reminded = coalesce(json_extract(state, '$.reminded'), 0),
        abandoned = coalesce(json_extract(state, '$.abandoned'), 0)
        WHERE origin = 'telegram' AND json_valid(state);
    -- Lines committed before the sequence existed: in time order, a participant's line
    -- before the reply at the same instant (as the console ordered them), the end last.
    CREATE TEMP TABLE lines_before AS
        SELECT kind, id, row_number() OVER (ORDER BY at, rank, kind, id) AS seq FROM (
            SELECT 'u' AS kind, id, user_at AS at, 0 AS rank FROM exchanges
            UNION ALL SELECT 's', id, system_at, 1 FROM exchanges WHERE system_at IS NOT NULL
            UNION ALL SELECT 'e', id, at, 1 FROM events
            UNION ALL SELECT 'x', rowid, ended_at, 2 FROM sessions WHERE ended_at IS NOT NULL
        );
    CREATE INDEX temp.lines_before_key ON lines_before(kind, id);
    UPDATE exchanges SET user_seq = l.seq FROM lines_before AS l
        WHERE l.kind = 'u' AND l.id = exchanges.id;
    UPDATE exchanges SET system_seq = l.seq FROM lines_before AS l
        WHERE l.kind = 's' AND l.id = exchanges.id;
    UPDATE events SET seq = l.seq FROM lines_before AS l WHERE l.kind = 'e' AND l.id = events.id;
    UPDATE sessions SET end_seq = l.seq FROM lines_before AS l
        WHERE l.kind = 'x' AND l.id = sessions.rowid;
    INSERT INTO sequence (id, value) SELECT 1, count(*) FROM lines_before;
    DROP TABLE temp.lines_before;
    """,
    # 7: task success as the protocol defines it: whether the task was done correctly
    # (the scenario's success_if on what the system reported, or a wizard's judgement), beside
    # what the system reported (success). Earlier sessions: not known.
    """
    ALTER TABLE sessions ADD COLUMN correct INTEGER;  -- 1, 0, or NULL: not defined
    """,
    # 8: withdrawals (GDPR art. 17): a withdrawn participant's rows are erased; what remains is
    # an anonymous count per study, and per system when the study asks ('' for the study)
    """
    CREATE TABLE withdrawals (
        study_id  TEXT NOT NULL,
        system_id TEXT NOT NULL DEFAULT '',
        count     INTEGER NOT NULL,
        PRIMARY KEY (study_id, system_id)
    );
    """,
    # 9: recruitment: single-use invitation codes, and a payment record per
    # participant from a platform (Prolific): the platform id sealed with the study secret,
    # how their part ended and the time they gave. A withdrawal erases the participant; the
    # triggers keep the payment record (unlinked, 'withdrawn') and the code spent.
    """
    CREATE TABLE invitations (
        code       TEXT PRIMARY KEY,
        created_at REAL NOT NULL,
        used_by    TEXT,   -- the participant who took it; '' once they withdrew; NULL: free
        used_at    REAL
    );
    CREATE TABLE payments (
        id             INTEGER PRIMARY KEY,
        participant_id TEXT UNIQUE,     -- NULL once the participant withdrew (erased)
        study_id       TEXT NOT NULL,
        platform       TEXT NOT NULL,   -- prolific
        platform_key   TEXT NOT NULL,   -- the platform id, sealed: never stored in the clear
        arrived_at     REAL NOT NULL,
        last_at        REAL NOT NULL,   -- their last activity: time given = last_at - arrived_at
        status         TEXT NOT NULL    -- started | completed | screened_out | declined |
                                        -- timed_out | withdrawn
    );
    CREATE TRIGGER payment_kept_on_withdrawal AFTER DELETE ON participants BEGIN
        UPDATE payments SET status = 'withdrawn', participant_id = NULL
            WHERE participant_id = OLD.id;
        UPDATE invitations SET used_by = '' WHERE used_by = OLD.id;
    END;
    """,
    # 10: pilots: participants played by ``ozlab demo`` or ``ozlab pilot`` are
    # marked, so reports tell simulated sessions from people's.
    """
    ALTER TABLE participants ADD COLUMN simulated INTEGER NOT NULL DEFAULT 0;  -- 1: simulated
    """,
    # 11: annotations: annotators are not participants. An annotation job (its
    # definition as JSON), the targets it rates (an exchange 'SESSION#TURN' or a whole
    # session, or material from outside the study), who is to rate which target in which
    # round, and the ratings. A target is keyed by job, target and level, with its session,
    # system and scenario kept, so nothing is pooled across them. Annotators are known by a
    # pseudonym ('A-xxxx') and, once they joined in Telegram, by a keyed hash of their chat
    # (never the Telegram id). Erasing a participant deletes their sessions: the triggers
    # take the annotations of those sessions with them; an annotator's ratings are kept.
    """
    CREATE TABLE annotation_jobs (
        job            TEXT PRIMARY KEY,
        study_id       TEXT NOT NULL,
        definition     TEXT NOT NULL,      -- the job file, as JSON
        seen_once      INTEGER NOT NULL,   -- 1: in order, never revisited
        drop_out_after REAL,               -- seconds of silence that count as dropping out
        version        INTEGER NOT NULL DEFAULT 0,  -- grows with every change (planning)
        created_at     REAL NOT NULL
    );
    CREATE TABLE annotators (
        id             TEXT PRIMARY KEY,   -- pseudonym 'A-xxxx'
        job            TEXT NOT NULL REFERENCES annotation_jobs(job),
        code           TEXT UNIQUE,        -- 'ann-CODE'; NULL for imported annotators
        chat_hash      TEXT,               -- keyed hash of the Telegram id, once joined
        chat_key       TEXT,               -- the chat id, encrypted; NULL once dropped
        origin         TEXT NOT NULL,      -- telegram | import
        created_at     REAL NOT NULL,
        joined_at      REAL,
        last_active_at REAL,
        paused         INTEGER NOT NULL DEFAULT 0,
        dropped_at     REAL,
        UNIQUE (job, chat_hash)
    );
    CREATE INDEX annotators_by_chat ON annotators(chat_hash);
    CREATE TABLE annotation_targets (
        id          INTEGER PRIMARY KEY,
        job         TEXT NOT NULL REFERENCES annotation_jobs(job),
        target      TEXT NOT NULL,         -- 'SESSION#TURN', 'SESSION', or an outside id
        level       TEXT NOT NULL,         -- exchange | session
        session_id  TEXT,
        turn        INTEGER,
        system_id   TEXT,
        scenario_id TEXT,
        position    INTEGER NOT NULL,      -- the order targets are shown in
        UNIQUE (job, target, level)
    );
    CREATE INDEX annotation_targets_by_session ON annotation_targets(session_id);
    CREATE TABLE annotation_assignments (
        target_id   INTEGER NOT NULL REFERENCES annotation_targets(id),
        annotator   TEXT NOT NULL REFERENCES annotators(id),
        round       TEXT NOT NULL,         -- first | adjudication
        assigned_at REAL NOT NULL,
        done_at     REAL,
        released_at REAL,                  -- given to someone else (the annotator dropped out)
        PRIMARY KEY (target_id, annotator)
    );
    CREATE INDEX annotation_assignments_by_annotator ON annotation_assignments(annotator);
    CREATE TABLE annotations (
        id            INTEGER PRIMARY KEY,
        target_id     INTEGER NOT NULL REFERENCES annotation_targets(id),
        annotator     TEXT NOT NULL REFERENCES annotators(id),
        instrument_id TEXT NOT NULL,
        item_id       TEXT NOT NULL,
        value         INTEGER,             -- as answers: the point of a scale, 1/0 for yes/no
        label         TEXT,
        text          TEXT,                -- free text, or options coded as words
        round         TEXT NOT NULL,       -- first | adjudication
        origin        TEXT NOT NULL,       -- telegram | import
        recorded_at   REAL NOT NULL,
        UNIQUE (target_id, annotator, item_id, round)
    );
    CREATE TRIGGER annotations_go_with_their_session AFTER DELETE ON sessions BEGIN
        DELETE FROM annotations WHERE target_id IN
            (SELECT id FROM annotation_targets WHERE session_id = OLD.id);
        DELETE FROM annotation_assignments WHERE target_id IN
            (SELECT id FROM annotation_targets WHERE session_id = OLD.id);
        DELETE FROM annotation_targets WHERE session_id = OLD.id;
    END;
    """,
    # 12: linguistic stress tests (IDIAL): a logged utterance changed by one
    # phenomenon, and per test and system the replay of the logged prefix, unchanged and
    # perturbed, in a fresh conversation; verdicts by judge (auto, human, llm). Only these
    # tables are written by a run: live sessions are never touched. A session's erasure
    # takes its tests, replays and verdicts with it (the triggers).
    """
    CREATE TABLE stress_tests (
        id          INTEGER PRIMARY KEY,
        session_id  TEXT NOT NULL,     -- the logged session whose prefix is replayed
        turn        INTEGER NOT NULL,  -- the participant's line that is changed
        stress_type TEXT NOT NULL,     -- ST-1 ... ST-11
        original    TEXT NOT NULL,
        perturbed   TEXT NOT NULL,
        source      TEXT NOT NULL,     -- generated | proposed | authored
        ad_hoc      INTEGER NOT NULL DEFAULT 0,  -- no logged utterance fitted: written for it
        change      TEXT NOT NULL DEFAULT '',    -- what was changed, in words
        review      TEXT NOT NULL,     -- accepted | pending | rejected (proposals wait)
        created_at  REAL NOT NULL,
        UNIQUE (session_id, turn, stress_type, perturbed)
    );
    CREATE TABLE stress_replays (
        test_id          INTEGER NOT NULL REFERENCES stress_tests(id),
        system_id        TEXT NOT NULL,
        started_at       REAL NOT NULL,
        finished_at      REAL NOT NULL,
        baseline_texts   TEXT NOT NULL,   -- JSON list: the unchanged replay's reply
        baseline_events  TEXT NOT NULL,   -- JSON object: event -> what the system did
        baseline_error   TEXT,            -- the system failed on the unchanged replay
        perturbed_texts  TEXT NOT NULL,
        perturbed_events TEXT NOT NULL,
        perturbed_error  TEXT,
        applicable       INTEGER NOT NULL,  -- 0: the unchanged replay missed the logged outcome
        PRIMARY KEY (test_id, system_id)
    );
    CREATE TABLE stress_verdicts (
        test_id   INTEGER NOT NULL REFERENCES stress_tests(id),
        system_id TEXT NOT NULL,
        judge     TEXT NOT NULL,   -- auto | human | llm
        verdict   TEXT NOT NULL,   -- pass | fail | unsure | not_applicable
        judged_by TEXT NOT NULL DEFAULT '',  -- the person's pseudonym, or the model
        reason    TEXT NOT NULL DEFAULT '',
        at        REAL NOT NULL,
        PRIMARY KEY (test_id, system_id, judge)
    );
    CREATE INDEX stress_tests_by_session ON stress_tests(session_id);
    CREATE TRIGGER stress_tests_erased AFTER DELETE ON sessions BEGIN
        DELETE FROM stress_verdicts
            WHERE test_id IN (SELECT id FROM stress_tests WHERE session_id = OLD.id);
        DELETE FROM stress_replays
            WHERE test_id IN (SELECT id FROM stress_tests WHERE session_id = OLD.id);
        DELETE FROM stress_tests WHERE session_id = OLD.id;
    END;
    """,
    # 13: the ledger of erasures, so that backups can be erased too: per erasure the study,
    # a digest of the pseudonym (never the pseudonym, never content) and when. Written in
    # the erasure's own transaction; carried into every backup it is applied to.
    """
    CREATE TABLE erasures (
        study_id  TEXT NOT NULL,
        digest    TEXT NOT NULL,   -- sha-256 of the pseudonym: who holds a row can match it
        erased_at REAL NOT NULL,
        PRIMARY KEY (digest, erased_at)
    );
    """,
    # 14: pairwise votes, one row per judgement between two systems, whatever gave it: a
    # side-by-side turn, a preference item, an ACUTE pair. system_a is always the one shown
    # (or met) first; winner is said from its side. A participant's erasure takes their
    # votes (by rater) and every vote that showed one of their sessions (the trigger).
    """
    CREATE TABLE votes (
        id            TEXT PRIMARY KEY,    -- stable: 'SESSION#TURN', 'SESSION:ITEM', ...
        study_id      TEXT NOT NULL,
        source        TEXT NOT NULL,       -- side_by_side | preference | acute
        rater         TEXT NOT NULL,       -- participant's or annotator's pseudonym
        rater_kind    TEXT NOT NULL,       -- participant | annotator
        system_a      TEXT NOT NULL,       -- shown first / as "A" / met first
        system_b      TEXT NOT NULL,
        winner        TEXT NOT NULL,       -- a | b | tie | both_bad | not_comparable
        strength      TEXT,                -- much | slightly (preference items)
        question      TEXT NOT NULL,       -- item id, ACUTE question id, or 'turn'
        scenario_id   TEXT,
        session_id    TEXT,                -- the session, or the ACUTE pair's id
        turn          INTEGER,             -- side by side: the exchange judged
        session_a     TEXT,                -- ACUTE: the logged conversation shown first
        session_b     TEXT,
        flag_reason   TEXT,                -- set: kept apart from the fit
        onboarding    INTEGER NOT NULL DEFAULT 0,  -- ACUTE pair with a known answer
        expected      TEXT,                -- the known answer of an onboarding pair
        onboarding_correct INTEGER,        -- onboarding: the known answer was given
        job           TEXT,                -- the ACUTE annotation job
        origin        TEXT NOT NULL,       -- telegram | import
        voted_at      REAL NOT NULL
    );
    CREATE INDEX votes_by_rater ON votes(rater);
    CREATE INDEX votes_by_session ON votes(session_id);
    CREATE TRIGGER votes_go_with_their_session AFTER DELETE ON sessions BEGIN
        DELETE FROM votes
            WHERE session_id = OLD.id OR session_a = OLD.id OR session_b = OLD.id;
    END;
    """,
    # 15: annotators played by a simulation (``ozlab demo``), marked as participants are, so
    # that a demo replaces its own simulated annotators, their ratings and votes, and nothing
    # else
    """
    ALTER TABLE annotators ADD COLUMN simulated INTEGER NOT NULL DEFAULT 0;
    """,
    # 16: model judges (``ozlab judge run``): every call to a judge kept by its exact request
    # (a rerun or a resumed run asks nothing twice) with the answer and the tokens it cost,
    # and the provenance of every judgement (model, endpoint host, prompt hash, temperature,
    # seed, outcome, date). A request holds conversations' words: each call and judgement
    # names the sessions it shows, and a session's erasure takes them along (the trigger).
    """
    CREATE TABLE judge_calls (
        key               TEXT PRIMARY KEY,   -- sha-256 of the request as sent, keys sorted
        judge             TEXT NOT NULL,      -- the judge that made the call first
        request           TEXT NOT NULL,      -- the request as sent (JSON)
        answer            TEXT NOT NULL,      -- what the judge said
        prompt_tokens     INTEGER,
        completion_tokens INTEGER,
        session_id        TEXT,               -- the conversation shown (first, of a pair)
        paired_session    TEXT,               -- a pair's other conversation
        at                REAL NOT NULL
    );
    CREATE INDEX judge_calls_by_session ON judge_calls(session_id);
    CREATE INDEX judge_calls_by_paired_session ON judge_calls(paired_session);
    CREATE TABLE judgements (
        job            TEXT NOT NULL,
        judge          TEXT NOT NULL,
        target         TEXT NOT NULL,
        level          TEXT NOT NULL,
        item_id        TEXT NOT NULL,
        model          TEXT NOT NULL,
        host           TEXT NOT NULL,
        prompt_hash    TEXT NOT NULL,
        temperature    REAL NOT NULL,
        seed           INTEGER,
        outcome        TEXT NOT NULL,      -- rated | unparseable | failed
        said           TEXT NOT NULL,      -- the answer kept (the retry's), or the failure
        retried        INTEGER NOT NULL,   -- 1: the first answer was unparseable
        call_key       TEXT,               -- the call that gave the answer kept
        session_id     TEXT,
        paired_session TEXT,
        at             REAL NOT NULL,
        PRIMARY KEY (job, judge, target, level, item_id)
    );
    CREATE INDEX judgements_by_session ON judgements(session_id);
    CREATE INDEX judgements_by_paired_session ON judgements(paired_session);
    CREATE TRIGGER judges_go_with_their_session AFTER DELETE ON sessions BEGIN
        DELETE FROM judge_calls WHERE session_id = OLD.id OR paired_session = OLD.id;
        DELETE FROM judgements WHERE session_id = OLD.id OR paired_session = OLD.id;
    END;
    """,
    # 17: the register of files ozlab wrote with participants' data (exports, reports,
    # figures, payments): where, what kind, and when last, so that an erasure can name the
    # files written before it, which it cannot reach. A path, never content.
    """
    CREATE TABLE written_files (
        path       TEXT PRIMARY KEY,   -- absolute, on the machine that wrote it
        kind       TEXT NOT NULL,      -- export | report | figures | payments
        written_at REAL NOT NULL       -- the last time ozlab wrote it
    );
    """,
    # 18: the money path: every request to a recruitment platform that moves money
    # (a bulk bonus created, then paid; a bulk approval), recorded as an intent before it
    # is sent and its outcome after. ``request`` is sealed with the study secret (the
    # platform's participant ids and amounts); an intent without an outcome is a request
    # whose fate the platform is asked before anything is sent again. Not a participant's
    # row: an erasure leaves it, as it leaves the payments row, unlinked. The payments row
    # gains what the platform said of the participant's submission.
    """
    CREATE TABLE money_path (
        id             INTEGER PRIMARY KEY,
        study_id       TEXT NOT NULL,
        platform       TEXT NOT NULL,   -- prolific
        platform_study TEXT NOT NULL,   -- the study's id on the platform
        action         TEXT NOT NULL,   -- bonus_create | bonus_pay | approve
        request        TEXT NOT NULL,   -- sealed JSON: platform ids and amounts in cents
        bulk_id        TEXT,            -- the platform's bulk bonus payment id, once known
        intent_at      REAL NOT NULL,
        outcome        TEXT,            -- NULL: sent, fate unknown | applied | not_applied
        answer         TEXT,            -- what the platform said (totals), JSON
        outcome_at     REAL
    );
    ALTER TABLE payments ADD COLUMN submission_key TEXT;   -- the platform's submission id, sealed
    ALTER TABLE payments ADD COLUMN platform_status TEXT;  -- the submission's status, last seen
    ALTER TABLE payments ADD COLUMN approved_at REAL;      -- when ozlab approved it
    """,
    # 19: the side an annotator is shown a pair in: 1 when its conversations are shown in
    # the other order than its target's name (``FIRST~SECOND``) gives, so that each
    # annotator's share of a pair of systems shows each system first equally often.
    # Assignments made before show the name's order (0).
    """
    ALTER TABLE annotation_assignments ADD COLUMN swapped INTEGER NOT NULL DEFAULT 0;
    """,
    # 20: the cell of the design each participant was assigned to (the system between
    # subjects, a Latin square's row, ...), which a quota counts and the console and
    # ``ozlab prolific status`` show the progress of; NULL until assigned.
    """
    ALTER TABLE participants ADD COLUMN design_cell TEXT;
    """,
    # 21: annotators recruited on a platform: an annotation job's annotators get payment
    # records too, in the same table (one platform id sealed; the job says whose record it
    # is, NULL for participants). ``platform_tag``, the keyed hash of the platform id,
    # tells the same id apart without opening it: one id, one annotator of a job. Erasing
    # the annotator leaves the record, unlinked and withdrawn, as for a participant.
    """
    ALTER TABLE payments ADD COLUMN job TEXT;           -- the annotation job; NULL: a participant
    ALTER TABLE payments ADD COLUMN annotator TEXT;     -- the annotator; NULL once erased
    ALTER TABLE payments ADD COLUMN platform_tag TEXT;  -- keyed hash of the platform id
    CREATE UNIQUE INDEX payments_by_annotator ON payments(annotator);
    CREATE INDEX payments_by_job_tag ON payments(job, platform_tag);
    CREATE TRIGGER payment_kept_on_annotator_withdrawal AFTER DELETE ON annotators BEGIN
        UPDATE payments SET status = 'withdrawn', annotator = NULL, platform_tag = NULL
            WHERE annotator = OLD.id;
    END;
    """,
    # 22: voice notes and photos participants sent: one row per file, with the exchange it
    # was said in, what Telegram and the fetch said of it, its content hash and its
    # transcript with the engine and model that made it. The bytes of a file the study
    # keeps (a photo; a voice note only under ``speech.keep_audio``) are a row of
    # ``media_files``, named by that hash: in the database, so that the step that took
    # the file commits it, an erasure deletes it with the participant's rows, and a backup
    # carries it and the erasure ledger reaches it there. Never logged.
    """
    CREATE TABLE media (
        id             INTEGER PRIMARY KEY,
        participant_id TEXT NOT NULL,
        session_id     TEXT NOT NULL,
        turn           INTEGER NOT NULL,  -- the exchange whose participant's line it is
        kind           TEXT NOT NULL,     -- voice | photo
        mime           TEXT,
        duration       INTEGER,           -- seconds, as Telegram said
        width          INTEGER,
        height         INTEGER,
        size           INTEGER NOT NULL,  -- bytes fetched
        digest         TEXT NOT NULL,     -- SHA-256 of the bytes, hex
        kept           INTEGER NOT NULL,  -- 1: the bytes are in media_files
        transcript     TEXT,              -- the words heard (a voice note transcribed)
        engine         TEXT,
        model          TEXT,
        fetch_ms       REAL NOT NULL,
        transcribe_ms  REAL,
        at             REAL NOT NULL      -- when it was taken (and transcribed)
    );
    CREATE INDEX media_by_session ON media(session_id);
    CREATE INDEX media_by_digest ON media(digest);
    CREATE TABLE media_files (
        digest TEXT PRIMARY KEY,          -- SHA-256 of data, hex: a file kept once
        data   BLOB NOT NULL
    );
    """,
    # 23: the experimenters' accounts of the web page (``ozlab web``), per study: a name,
    # its role on this study, the password as a slow hash (argon2id, in its own encoded
    # form), never the password; failed sign-ins since the last good one (the lock-out);
    # one-time sign-in links kept as the SHA-256 of their token, which only the link holds.
    # Not a participant's row: no erasure reaches it.
    """
    CREATE TABLE experimenters (
        name          TEXT PRIMARY KEY,
        role          TEXT NOT NULL,              -- viewer | experimenter
        password_hash TEXT NOT NULL,
        failures      INTEGER NOT NULL DEFAULT 0, -- failed sign-ins since the last good one
        locked_until  REAL,                       -- no sign-in before this time
        created_at    REAL NOT NULL
    );
    CREATE TABLE sign_in_links (
        token_hash TEXT PRIMARY KEY,
        name       TEXT,              -- the account it signs in; NULL: a new one, named on use
        role       TEXT NOT NULL,
        expires_at REAL NOT NULL,
        used_at    REAL               -- a link signs in once
    );
    """,
)
