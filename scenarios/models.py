"""Studies and scenarios as data: the files a researcher edits instead of code."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Annotated, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from questionnaires.models import Loc, Questionnaire, error_at, repeated_ids
from scenarios.durations import Seconds
from scenarios.jobs import AnnotationJob, Judge
from scenarios.media import Speech, TaskMedia
from scenarios.sentences import SOURCE, catalogue, code_of
from scenarios.simulation import Simulation
from scenarios.systems import OpenAISystem, SystemSpec

_EN = catalogue(SOURCE)
"""The English default sentences (``scenarios/texts/en.yaml``): ``Texts`` defaults."""


T = TypeVar("T")


class _Model(BaseModel):
    """Validators built when first used (``defer_build``): a command that validates a
    study validates it as one tree, and building each model at import cost every command
    0.2 s."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class Stimulus(_Model):
    """One thing to rate in a rating task (a row of its CSV or JSONL file)."""

    id: str
    """The row's id, stored with each rating of it."""
    fields: dict[str, str]
    """The row's columns, filled into the scenario's ``stimulus_template``."""


Fact = str | int | float | bool


class Check(_Model):
    """One test on a field of what a system reported doing (its success event's data):
    exactly one of ``equals``, ``one_of``, ``not_in`` or ``contains`` (for a list field)."""

    equals: Fact | None = None
    """The field has this value (text compared ignoring case)."""
    one_of: tuple[Fact, ...] = ()
    """The field has one of these values."""
    not_in: tuple[Fact, ...] = ()
    """The field is present and has none of these values (the HMD gift: not a game already
    on Alex's wishlist)."""
    contains: Fact | None = None
    """The field is a list that holds this value (the HMD gift: ``genres`` contains
    ``adventure``)."""

    @model_validator(mode="after")
    def _one_test(self) -> Check:
        given = [
            self.equals is not None,
            bool(self.one_of),
            bool(self.not_in),
            self.contains is not None,
        ]
        if sum(given) != 1:
            raise ValueError("give exactly one of 'equals', 'one_of', 'not_in' or 'contains'")
        return self

    def holds(self, value: object) -> bool:
        """Whether ``value`` passes; text is compared ignoring case, as studies write it."""
        fold = _folded(value)
        if self.equals is not None:
            return fold == _folded(self.equals)
        if self.one_of:
            return fold in {_folded(v) for v in self.one_of}
        if self.not_in:
            return value is not None and fold not in {_folded(v) for v in self.not_in}
        items = value if isinstance(value, list | tuple) else ()
        return _folded(self.contains) in {_folded(v) for v in items}


def _folded(value: object) -> object:
    return value.casefold() if isinstance(value, str) else value


TOOL_NAME = r"^[A-Za-z0-9_-]{1,64}$"
"""What OpenAI-compatible servers accept as a function's name."""


class Tool(_Model):
    """A function the scenario offers a language-model system (OpenAI function calling):
    the model may call it, ozlab answers from the scenario's own ``results`` table or
    Python ``function``, and every call and result is recorded with the session."""

    name: str = Field(pattern=TOOL_NAME)
    """The function's name as the model sees it (``add_to_wishlist``)."""
    description: str = ""
    """What the function does, in words the model reads."""
    parameters: dict[str, object] = {"type": "object", "properties": {}}
    """The JSON schema of its arguments (an object with ``properties`` and ``required``)."""
    results: str | None = None
    """A ``.csv`` or ``.yaml`` file beside the scenario file: rows matched on the arguments
    of a call, the first that matches gives its ``result``."""
    function: str | None = None
    """``file.py:name`` beside the scenario file (or ``package.module:name``): called with
    the arguments as keyword arguments, its return value is the result."""
    ends_task: bool = False
    """A call of this function that gets a result ends the task as done by the system
    (the demo shop's "added to the wishlist"); ``success_if`` checks its arguments as
    ``name.argument``."""

    @model_validator(mode="after")
    def _one_source(self) -> Tool:
        if (self.results is None) == (self.function is None):
            raise ValueError("give exactly one of 'results' (a table) or 'function'")
        if self.parameters.get("type", "object") != "object":
            raise ValueError("parameters must be a JSON schema of type 'object'")
        properties = self.parameters.get("properties", {})
        if not isinstance(properties, dict):
            raise ValueError("parameters.properties must map each argument to its schema")
        required = self.parameters.get("required", [])
        if not isinstance(required, list) or not all(r in properties for r in required):
            raise ValueError("parameters.required must list arguments named in properties")
        return self

    @property
    def arguments(self) -> tuple[str, ...]:
        properties = self.parameters.get("properties", {})
        return tuple(properties) if isinstance(properties, dict) else ()


class ToolRow(_Model):
    """One row of a tool's results table: when the call's arguments match, its result."""

    line: int
    """Where the row starts in its file, for the report of a bad call."""
    when: dict[str, str] = {}
    """Argument → value it must have (text compared ignoring case); an argument not
    named matches any value."""
    result: object = None
    """What the function returns to the model (text, or anything JSON can hold)."""


class ToolSource(_Model):
    """Where a scenario's tool gets its results, as loading found them."""

    rows: tuple[ToolRow, ...] = ()
    """A results table's rows, in file order."""
    file: str | None = None
    """A ``function`` tool: the Python file (absolute) or module it comes from."""
    function: str | None = None
    """A ``function`` tool: the function's name in that file or module."""


class Scenario(_Model):
    """A task a participant performs: a dialogue with a system, or rating given material."""

    id: str = Field(min_length=1, max_length=64)
    """The scenario's name in the study, the database and the report; equals its file name."""
    kind: Literal["dialogue", "rating", "side_by_side"] = "dialogue"
    """``dialogue``: the participant chats with a system; ``rating``: they rate the rows of
    ``stimuli`` with ``rate_with``; ``side_by_side``: every message goes to two systems at
    once, shown as "A" and "B", and the participant votes for the better reply."""
    title: str
    """A short name, shown above the brief and in the report."""
    brief: str = Field(min_length=1)
    """What the participant is asked to do, shown before the task; LLM systems may get it in
    their prompt as ``{brief}``."""
    goal: str | None = None
    """What the participant should achieve, for the experimenters and the report."""
    success: str | None = None
    """How success is decided, in words (the system reports ``task_success``)."""
    success_if: dict[str, Check] = {}
    """When the task counts as done correctly: tests on the fields of what the system
    reported doing with ``task_success`` (the demo shop: the game added, with ``title``,
    ``genres`` and ``platforms``), or on a tool's arguments as ``tool.argument``
    (``add_to_wishlist.game``). Empty: the report cannot tell correct from reported."""
    success_criterion: str | None = Field(default=None, min_length=1, max_length=2000)
    """When the task counts as done, in words a reader of the transcript can check ("the
    assistant told the participant that Glass Desert costs €29.99"): what the study's
    ``success_judge`` reads. None: no model judge decides this task (dialogue tasks only)."""
    tools: tuple[Tool, ...] = ()
    """Functions offered to a language-model (``openai``) system in this task, with what
    each returns; calling one with ``ends_task`` ends the task as done."""
    expected_duration: Seconds | None = None
    """How long the task should take; the report and the pilot section compare the time
    participants took with it."""
    max_exchanges: int | None = Field(default=None, ge=1)
    """The task ends after this many exchanges; none: no limit."""
    time_limit: Seconds | None = None
    """The task ends when this much time has passed since it began; none: no limit."""
    opening_line: str | None = None
    """A scripted first message the bot sends as the dialogue begins (HRI CUES), before the
    participant writes."""
    closing_line: str | None = None
    """A scripted last message the bot sends when the task ends, however it ends."""
    system_prompt: str | None = None
    """For LLM systems: replaces the system's own prompt in this scenario."""
    post_task: tuple[str, ...] = ()
    """Questionnaires (ids) asked after the task, in order."""
    exchange: tuple[str, ...] = ()
    """Questionnaires asked after each system reply, without blocking the chat."""
    stimuli: str | None = None
    """Rating tasks: a CSV or JSONL file (beside the scenario file) with one row per item."""
    stimulus_template: str | None = None
    """Rating tasks: how a row is shown, with ``{column}`` fields filled from the row."""
    rate_with: tuple[str, ...] = ()
    """Rating tasks: the questionnaires answered for every row."""
    translations: dict[str, ScenarioText] = {}
    """Language code → this scenario's title, brief and scripted lines in that language."""
    media: TaskMedia = TaskMedia()
    """Dialogue tasks: voice notes and photos, from the participant and from the system,
    and what the system receives of them; by default, text only."""
    simulation: Simulation | None = Field(default=None, exclude=True)
    """How simulated participants (``ozlab demo``, ``ozlab pilot``) play this task; left
    out of the definition stored with the data (participants never see it)."""

    @model_validator(mode="after")
    def _tools_known(self) -> Scenario:
        problems: list[tuple[tuple[str | int, ...], str, object]] = []
        if self.success_criterion is not None and not self.success_criterion.strip():
            problems.append((("success_criterion",), "the criterion is blank", ""))
        elif self.success_criterion is not None and self.kind != "dialogue":
            message = f"only a dialogue task has a success criterion (this one is {self.kind})"
            problems.append((("success_criterion",), message, self.success_criterion))
        if self.media != TaskMedia() and self.kind != "dialogue":
            message = f"only a dialogue task takes voice notes or photos (this one is {self.kind})"
            problems.append((("media",), message, "media"))
        spoken = self.simulation.voice_rate if self.simulation is not None else 0.0
        if spoken and "voice" not in self.media.participant_sends:
            message = "simulated participants cannot speak: the task takes no voice notes"
            problems.append((("simulation", "voice_rate"), message, spoken))
        seen: set[str] = set()
        for index, tool in enumerate(self.tools):
            if tool.name in seen:
                problems.append(
                    (("tools", index, "name"), f"two tools are named {tool.name!r}", tool.name)
                )
            seen.add(tool.name)
        by_name = {tool.name: tool for tool in self.tools}
        for key in self.success_if:
            name, dot, argument = key.partition(".")
            if not dot:
                continue
            named = by_name.get(name)
            if named is None:
                known = ", ".join(sorted(by_name)) or "none"
                message = f"{key!r} names no tool of this scenario (its tools: {known})"
                problems.append((("success_if", key), message, key))
            elif argument not in named.arguments:
                known = ", ".join(named.arguments) or "none"
                message = f"tool {name!r} has no argument {argument!r} (its arguments: {known})"
                problems.append((("success_if", key), message, key))
        if problems:
            raise error_at("Scenario", problems)
        return self


class Design(_Model):
    """How participants get scenarios and systems; every assignment is stored with its seed.

    - ``random``: drawn from a generator seeded with ``seed`` and the participant.
    - ``balanced``: block randomization: each new participant goes to the (scenario, system)
      cells with the fewest active or completed sessions, ties drawn at random, so cells fill
      evenly as participants arrive, also when some drop out.
    - ``latin_square``: the order of systems (``within``) or of scenarios follows the rows
      of a balanced Latin square, one row per arriving participant.
    """

    type: Literal["random", "balanced", "latin_square"] = "random"
    """How scenarios and systems are assigned: ``random``, ``balanced`` or
    ``latin_square`` (see above)."""
    seed: int = 0
    """The random draws start from it: the same seed and the same arrivals give the same
    assignments. It is stored with every session."""
    systems: Literal["between", "within"] = "between"
    """``between``: one system for all of a participant's tasks; ``within``: each task
    with another system, so every participant meets every system."""
    tasks_per_participant: int | None = Field(default=None, ge=1)
    """How many scenarios each participant plays (IDIAL: 3); all of them if not set."""
    order: Literal["fixed", "random"] = "fixed"
    """The order of a participant's scenarios (``latin_square`` decides it itself)."""
    quota: int | None = Field(default=None, ge=1)
    """Completed participants each cell of the design needs (``ozlab check`` lists the
    cells: the system between subjects, the row of a Latin square, the row and system of
    a Latin square between subjects, else the whole study). A newcomer takes an open cell
    (fewest places taken first); one who arrives when every cell is full is told so before
    consent, with the platform's return instruction. A place is taken by a participant who
    completed, or who consented and has not been silent past ``timing.abandon_after``.
    None: no quota, everyone who comes takes part."""


class ScenarioText(_Model):
    """A scenario's words in another language."""

    title: str | None = None
    """The scenario's ``title`` in this language."""
    brief: str | None = None
    """The scenario's ``brief`` in this language."""
    opening_line: str | None = None
    """The scenario's ``opening_line`` in this language."""
    closing_line: str | None = None
    """The scenario's ``closing_line`` in this language."""


class Timing(_Model):
    """How long the bot waits for a silent participant."""

    reminder_after: Seconds = 600
    """A participant silent this long in a task or questionnaire gets one reminder."""
    abandon_after: Seconds = 3600
    """A participant silent this long is marked abandoned; they resume where they stood when
    they come back, unless ``close_abandoned``. Must be longer than ``reminder_after``."""
    close_abandoned: bool = False
    """Close an abandoned participant's session for good (they are told, and the recruitment
    platform's ``timed_out_code`` is shown) instead of letting them resume."""

    @model_validator(mode="after")
    def _reminder_first(self) -> Timing:
        if self.abandon_after <= self.reminder_after:
            raise error_at(
                "Timing",
                [
                    (
                        ("abandon_after",),
                        f"abandon_after ({self.abandon_after:g} s) must be longer than "
                        f"reminder_after ({self.reminder_after:g} s)",
                        self.abandon_after,
                    )
                ],
            )
        return self


class BonusRule(_Model):
    """What ``ozlab prolific bonus --from-study`` pays each participant from the platform, in
    the study's currency (a decimal: 0.25): per task they completed and per task done
    successfully (the scenario's ``success_if``, or a wizard's judgement)."""

    per_completed_task: Decimal = Field(default=Decimal(0), ge=0, decimal_places=2)
    """For each of the participant's sessions that ended (not abandoned)."""
    per_success: Decimal = Field(default=Decimal(0), ge=0, decimal_places=2)
    """For each of their sessions whose task was done successfully."""


class Recruitment(_Model):
    """A recruitment platform that pays participants by code (Prolific and the like).

    The study's link carries the participant's platform id as the ``/start`` payload:
    ``https://t.me/BOT?start=pid_{{%PROLIFIC_PID%}}`` (the bot reads what follows ``pid_``
    and stores it only sealed with the study secret). At the end each participant is shown
    the code for how their part ended, with the platform's return link.
    """

    platform: Literal["prolific"] = "prolific"
    """The platform, named in the participant's code message; Prolific today."""
    completion_code: str = Field(min_length=1, max_length=64)
    """Shown with the return link to a participant who finished the study."""
    screened_out_code: str | None = Field(default=None, min_length=1, max_length=64)
    """Shown to a participant screened out by a questionnaire's ``eligible_if`` (on
    Prolific, the study's in-study screening code, whose fixed screen-out payment Prolific
    makes itself). None: they are asked to return their submission."""
    declined_code: str | None = Field(default=None, min_length=1, max_length=64)
    """Shown to a participant who tapped "I do not agree". None: they are asked to return
    their submission."""
    timed_out_code: str | None = Field(default=None, min_length=1, max_length=64)
    """Shown to a participant who stayed silent until the study closed their session.
    None: they are asked to return their submission."""
    return_link: str = "https://app.prolific.com/submissions/complete?cc={code}"
    """Where a participant goes back to the platform; ``{code}`` is filled in."""
    bonus: BonusRule | None = None
    """A bonus rule (``per_completed_task``, ``per_success``) for ``ozlab prolific bonus``."""

    @model_validator(mode="after")
    def _code_in_link(self) -> Recruitment:
        if "{code}" not in self.return_link:
            raise ValueError("return_link must contain {code}, where the code goes")
        return self


class Texts(_Model):
    """Every sentence the bot says that is not part of a scenario or an instrument."""

    welcome: str
    """The first message after ``/start``: what the study is, before the consent text."""
    consent: str
    """The consent text, shown under the welcome with the agree and decline buttons."""
    consent_accept: str = _EN["consent_accept"]
    """The button that gives consent."""
    consent_decline: str = _EN["consent_decline"]
    """The button that declines to take part."""
    declined: str
    """The answer to a participant who declined; only their decision is stored."""
    invite_required: str = _EN["invite_required"]
    """To a newcomer without a code, once the study holds invitation codes."""
    invite_invalid: str = _EN["invite_invalid"]
    """To a participant whose ``/start`` code is not one of the study's."""
    invite_used: str = _EN["invite_used"]
    """To a participant whose single-use code someone else took."""
    platform_code: str = _EN["platform_code"]
    """At the end, to a participant from a recruitment platform: ``{platform}``, ``{code}`` and
    the return ``{link}`` are filled in."""
    platform_return: str = _EN["platform_return"]
    """To a participant from a recruitment platform whose part ends without a code of the
    study's (the study full, a decline or a screen-out the study gives no code for): how to
    return their submission on the ``{platform}``, which does not count against them."""
    study_full: str = _EN["study_full"]
    """To a newcomer when every cell of the design is full (``design.quota``), before
    consent: nothing of theirs is kept."""
    platform_id_other: str = _EN["platform_id_other"]
    """To a participant who opens the study's link with another {platform} ID than the one
    they came with: the first one stays."""
    payment_note: str = _EN["payment_note"]
    """Added to the consent text in a study with ``recruitment``: what a withdrawal keeps so
    that the time is paid (``{platform}``)."""
    brief_heading: str = _EN["brief_heading"]
    """The heading above a task's brief."""
    brief_footer: str = _EN["brief_footer"]
    """Under a task's brief: how to chat and how to stop."""
    finish_button: str = _EN["finish_button"]
    """The button under the brief that ends the task, like ``/done``."""
    consent_pending: str = _EN["consent_pending"]
    """To a participant who writes before answering the consent."""
    edit_ignored: str = _EN["edit_ignored"]
    """To a participant who edits a message they sent: edits are not passed on."""
    text_only: str = _EN["text_only"]
    """To a sticker, photo, voice note or other non-text message, in a task that takes text
    only (and outside tasks)."""
    media_not_taken: str = _EN["media_not_taken"]
    """In a task that takes voice notes or photos (``media.participant_sends``): to a kind
    of message it does not take (a video note, a sticker, a file)."""
    file_too_big: str = _EN["file_too_big"]
    """To a voice note or photo over the task's ``media.largest_file_mb`` (``{limit}``)."""
    media_unavailable: str = _EN["media_unavailable"]
    """When Telegram would not give the bot a file the participant sent."""
    media_unreadable: str = _EN["media_unreadable"]
    """When the speech engine could not read a voice note (or failed)."""
    not_heard: str = _EN["not_heard"]
    """When the speech engine found no words in a voice note."""
    heard: str = _EN["heard"]
    """What was heard in a voice note, shown where the task has ``media.show_transcript``:
    ``{transcript}`` is filled in."""
    retype_button: str = _EN["retype_button"]
    """The button under "I heard: …" for a transcript that is not what was said."""
    retype_prompt: str = _EN["retype_prompt"]
    """After that button: type what you said instead."""
    resumed: str = _EN["resumed"]
    """To a participant who comes back (after a long silence, or with ``/start`` in the
    middle of the study): it goes on where they stood."""
    reminder: str = _EN["reminder"]
    """The one reminder to a participant silent for ``timing.reminder_after``."""
    abandoned_closed: str = _EN["abandoned_closed"]
    """To a participant whose session the study closed after ``timing.abandon_after``
    (``close_abandoned``)."""
    system_error: str = _EN["system_error"]
    """When the system under test failed to answer: the participant is asked to send the message
    again."""
    system_slow: str = _EN["system_slow"]
    """When the system under test did not answer within its ``timeout``."""
    wait_for_reply: str = _EN["wait_for_reply"]
    """To a participant who writes while the reply to their last message is still coming."""
    paused: str = _EN["paused"]
    """When an experimenter pauses the session from the wizard console."""
    pause_over: str = _EN["pause_over"]
    """When an experimenter resumes a paused session."""
    held: str = _EN["held"]
    """After consent in a study with ``hold_after_consent``: the experimenter starts the
    session."""
    system_changed: str = _EN["system_changed"]
    """Before the next task's brief when it has another system than the task before
    (within subjects): the participant is told the assistant has changed."""
    task_over: str = _EN["task_over"]
    """After a task ends, before its questionnaires or the next task."""
    questionnaire_intro: str = _EN["questionnaire_intro"]
    """Before the questionnaires after a task, about its conversation."""
    post_study_intro: str = _EN["post_study_intro"]
    """Before the questionnaires after the last task (the conversation is long gone)."""
    skip_button: str = _EN["skip_button"]
    """The button that skips an optional question or comment."""
    done_button: str = _EN["done_button"]
    """The button that closes a multiple-choice question or confirms a ranking."""
    examples_button: str = _EN["examples_button"]
    """The button that shows an item's help and examples."""
    type_your_answer: str = _EN["type_your_answer"]
    """Under a free-text question: ``{limit}`` is its length limit."""
    pick_options: str = _EN["pick_options"]
    """Under a multiple-choice question."""
    slider_hint: str = _EN["slider_hint"]
    """Under a slider's buttons: that a typed number from 0 to 100 is an answer too."""
    ranking_hint: str = _EN["ranking_hint"]
    """Under a ranking question: tap the options from first to last; undo takes one back."""
    ranking_order: str = _EN["ranking_order"]
    """Above the options a participant has put in order so far."""
    undo_button: str = _EN["undo_button"]
    """The button that takes back the option ranked last."""
    rank_options: str = _EN["rank_options"]
    """To a participant who types while a ranking waits for taps."""
    pick_at_least_one: str = _EN["pick_at_least_one"]
    """To a participant who taps Done on a required multiple-choice question with nothing
    chosen."""
    not_eligible: str = _EN["not_eligible"]
    """To a participant whose screening answers do not meet ``eligible_if``."""
    tap_a_button: str = _EN["tap_a_button"]
    """To a message that is not an answer while a question waits: ``{low}`` and ``{high}`` are
    its scale's ends."""
    text_too_long: str = _EN["text_too_long"]
    """To a free-text answer over the item's limit (``{limit}``)."""
    question_pending: str = _EN["question_pending"]
    """To a message sent while a question must be answered first."""
    already_recorded: str = _EN["already_recorded"]
    """To a tap on a button whose answer is already stored (an old or repeated button)."""
    unknown_command: str = _EN["unknown_command"]
    """To a ``/command`` the bot does not know, unless ``systems_take_commands``."""
    unknown_command_consent: str = _EN["unknown_command_consent"]
    """To a ``/command`` the bot does not know, before the agreement is answered."""
    thanks: str = _EN["thanks"]
    """The last message of the study, after the last questionnaire."""
    finished: str = _EN["finished"]
    """To a participant who writes after finishing the study (with their platform code again,
    if any)."""
    declined_before: str = _EN["declined_before"]
    """To a participant who declined and writes again."""
    withdraw_confirm: str = _EN["withdraw_confirm"]
    """The question ``/withdraw`` asks before it erases anything."""
    withdraw_yes: str = _EN["withdraw_yes"]
    """The button that confirms the withdrawal and erases."""
    withdraw_no: str = _EN["withdraw_no"]
    """The button that cancels the withdrawal."""
    withdrawn: str = _EN["withdrawn"]
    """After a withdrawal: what was erased and what remains."""
    withdraw_cancelled: str = _EN["withdraw_cancelled"]
    """After the withdrawal was cancelled."""
    nothing_to_withdraw: str = _EN["nothing_to_withdraw"]
    """To ``/withdraw`` from someone the study holds nothing of."""
    audio_kept_note: str | None = None
    """Added to the consent text, before its closing question if it ends with one, in a
    study that keeps voice recordings (``speech.keep_audio``), which needs it written: what
    is kept, why, for how long."""
    consent_withdraw_note: str = _EN["consent_withdraw_note"]
    """Added to the consent text, before its closing question if it ends with one: how to
    withdraw."""
    help_not_started: str = _EN["help_not_started"]
    """``/help`` before ``/start``."""
    help_consent: str = _EN["help_consent"]
    """``/help`` while the consent waits for an answer."""
    help_declined: str = _EN["help_declined"]
    """``/help`` after declining."""
    help_waiting: str = _EN["help_waiting"]
    """``/help`` while the tasks are being prepared or held for an experimenter."""
    help_dialogue: str = _EN["help_dialogue"]
    """``/help`` during a dialogue task: ``{n}`` of ``{m}`` tasks."""
    help_rating: str = _EN["help_rating"]
    """``/help`` during a rating task: ``{n}`` of ``{m}`` tasks."""
    help_questionnaire: str = _EN["help_questionnaire"]
    """``/help`` during a questionnaire."""
    help_over: str = _EN["help_over"]
    """``/help`` after the participant's part is over."""
    help_commands: str = _EN["help_commands"]
    """The end of a participant's ``/help``: their commands."""
    command_help: str = _EN["command_help"]
    """``/help`` in the chat's command menu."""
    command_done: str = _EN["command_done"]
    """``/done`` in a participant's command menu."""
    command_withdraw: str = _EN["command_withdraw"]
    """``/withdraw`` in a participant's command menu."""
    command_pause: str = _EN["command_pause"]
    """``/pause`` in an annotator's command menu."""
    command_brief: str = _EN["command_brief"]
    """``/brief`` in an annotator's command menu."""
    command_back: str = _EN["command_back"]
    """``/back`` in an annotator's command menu, where the job allows it."""
    ann_command_withdraw: str = _EN["ann_command_withdraw"]
    """``/withdraw`` in an annotator's command menu."""
    # annotators: they rate stored conversations, never participants
    ann_welcome: str = _EN["ann_welcome"]
    """An annotator's first message: ``{annotator}`` is their pseudonym, ``{title}`` the job's
    title."""
    ann_brief_heading: str = _EN["ann_brief_heading"]
    """The heading above an annotation job's guidelines."""
    ann_examples_heading: str = _EN["ann_examples_heading"]
    """The heading above the guidelines' worked examples."""
    ann_example: str = _EN["ann_example"]
    """One worked example: ``{exchange}``, ``{rating}`` and ``{why}`` from the job's brief."""
    ann_commands_back: str = _EN["ann_commands_back"]
    """An annotator's commands, in a job that allows ``/back``."""
    ann_commands_seen_once: str = _EN["ann_commands_seen_once"]
    """An annotator's commands, in a job with ``seen_once_in_order``."""
    ann_code_taken: str = _EN["ann_code_taken"]
    """To an annotator code used from a second Telegram account."""
    ann_platform_id_taken: str = _EN["ann_platform_id_taken"]
    """To a recruiting job's link opened with a {platform} ID that annotates the job from
    another Telegram account already."""
    ann_code_unknown: str = _EN["ann_code_unknown"]
    """To an annotator code the study does not know."""
    ann_code_dropped: str = _EN["ann_code_dropped"]
    """To an annotator declared dropped, whatever they send."""
    ann_withdraw_confirm: str = _EN["ann_withdraw_confirm"]
    """An annotator's ``/withdraw``, asked first (their ratings are erased)."""
    ann_withdraw_confirm_kept: str = _EN["ann_withdraw_confirm_kept"]
    """An annotator's ``/withdraw``, asked first, in a job whose consent keeps ratings
    unlinked (``on_withdrawal: keep_unlinked``)."""
    ann_withdraw_cancelled: str = _EN["ann_withdraw_cancelled"]
    """An annotator answered No to "withdraw?"."""
    ann_withdrawn: str = _EN["ann_withdrawn"]
    """An annotator has withdrawn: what was erased."""
    ann_withdrawn_kept: str = _EN["ann_withdrawn_kept"]
    """An annotator has withdrawn from a job that keeps ratings unlinked: what was erased,
    what was kept."""
    ann_code_already: str = _EN["ann_code_already"]
    """To an annotator who opens a second code of a job they already annotate."""
    ann_participant_chat: str = _EN["ann_participant_chat"]
    """To a participant's account that opens an annotator code."""
    ann_annotator_chat: str = _EN["ann_annotator_chat"]
    """To an annotator's account that sends a participant code."""
    ann_progress_exchange: str = _EN["ann_progress_exchange"]
    """Where an annotator stands on an exchange: ``{exchange}`` of ``{exchanges}``,
    ``{conversation}`` of ``{conversations}``."""
    ann_progress_session: str = _EN["ann_progress_session"]
    """Where an annotator stands on a whole conversation: ``{conversation}`` of
    ``{conversations}``."""
    ann_conversation_heading: str = _EN["ann_conversation_heading"]
    """Above a conversation's transcript: ``{conversation}`` of ``{conversations}``."""
    ann_conversation_more: str = _EN["ann_conversation_more"]
    """Above the next part of a conversation's transcript."""
    ann_user: str = _EN["ann_user"]
    """How the participant's lines are labelled in a transcript."""
    ann_system: str = _EN["ann_system"]
    """How the system's lines are labelled in a transcript."""
    ann_no_reply: str = _EN["ann_no_reply"]
    """In a transcript, where the system gave no reply."""
    ann_paused: str = _EN["ann_paused"]
    """After ``/pause``."""
    ann_resumed: str = _EN["ann_resumed"]
    """To an annotator who comes back: the link again, or a message after ``/pause``."""
    ann_back_refused: str = _EN["ann_back_refused"]
    """To ``/back`` in a job with ``seen_once_in_order``."""
    ann_back_nothing: str = _EN["ann_back_nothing"]
    """To ``/back`` when there is no earlier rating to change."""
    ann_back_done: str = _EN["ann_back_done"]
    """After ``/back``: the previous rating is asked again."""
    ann_target_done: str = _EN["ann_target_done"]
    """To a tap on the buttons of a target already rated."""
    ann_target_moved: str = _EN["ann_target_moved"]
    """To an annotator whose open target went to someone else while they were silent."""
    ann_all_done: str = _EN["ann_all_done"]
    """When an annotator has rated everything assigned to them."""
    ann_share_done: str = _EN["ann_share_done"]
    """When an annotator recruited on a platform has rated their share of the job (the
    platform's code follows)."""
    ann_nothing_yet: str = _EN["ann_nothing_yet"]
    """To an annotator who has nothing to rate yet."""
    ann_new_work: str = _EN["ann_new_work"]
    """Before new targets, to an annotator who was waiting for work."""
    ann_help_rating: str = _EN["ann_help_rating"]
    """An annotator's ``/help`` while rating: ``{title}`` and ``{progress}``."""
    ann_help_paused: str = _EN["ann_help_paused"]
    """An annotator's ``/help`` while paused: ``{title}`` and ``{progress}``."""
    ann_progress_pair: str = _EN["ann_progress_pair"]
    """Where an annotator stands in a pairwise job: ``{pair}`` of ``{pairs}``."""
    ann_pair_conversation: str = _EN["ann_pair_conversation"]
    """Above each conversation of a pair: ``{pair}``, ``{pairs}``, ``{side}`` (1 or 2)."""
    ann_speaker: str = _EN["ann_speaker"]
    """How the judged speaker's lines are labelled in a pair: ``{side}``."""
    ann_partner: str = _EN["ann_partner"]
    """How the other speaker's lines are labelled in a pair."""
    ann_not_qualified: str = _EN["ann_not_qualified"]
    """To an annotator below a pairwise job's onboarding threshold: no real pairs."""
    ann_help_idle: str = _EN["ann_help_idle"]
    """An annotator's ``/help`` with nothing left to rate: ``{title}``."""
    arena_heading: str = _EN["arena_heading"]
    """Side by side: the question under the two replies, with the vote's buttons."""
    arena_side: str = _EN["arena_side"]
    """Side by side: the label above a reply, ``{side}`` A or B."""
    arena_side_failed: str = _EN["arena_side_failed"]
    """Side by side: in place of a reply that failed (``{side}``); no vote that turn."""
    arena_a_better: str = _EN["arena_a_better"]
    """Side by side: the vote's button for A's reply."""
    arena_b_better: str = _EN["arena_b_better"]
    """Side by side: the vote's button for B's reply."""
    arena_tie: str = _EN["arena_tie"]
    """Side by side: the vote's button for two replies as good as each other."""
    arena_both_bad: str = _EN["arena_both_bad"]
    """Side by side: the vote's button for two replies that are both bad."""
    arena_voted: str = _EN["arena_voted"]
    """Side by side: the vote's message once voted, ``{choice}`` the button's words."""
    arena_revealed: str = _EN["arena_revealed"]
    """Side by side, when the study reveals names: ``{a}`` and ``{b}`` after the vote."""


class SideBySide(_Model):
    """How side-by-side tasks show their two systems."""

    reveal_names: bool = False
    """Tell the participant which system was A and which B, after each vote."""
    names: dict[str, tuple[str, ...]] = {}
    """System id → the names it might call itself ("ShopBot"): a reply that contains one
    of its own system's names is flagged, and its vote kept apart from the ranking."""


class PairwiseChoices(_Model):
    """The protocol's choices for the report's pairwise statistics (docs/pairwise.md)."""

    ties: Literal["half", "davidson"] = "half"
    """``half``: a tie is half a win for each side (Chatbot Arena's count); ``davidson``:
    Davidson's (1970) tie model, with its tie parameter estimated."""
    both_bad: Literal["exclude", "tie"] = "exclude"
    """``exclude``: "both bad" votes are left out of the fit and counted; ``tie``: they
    count as ties (a vote that neither is better)."""
    anchor: str | None = None
    """The system whose score is ``anchor_score`` and log-strength 0: every score and
    interval is relative to it. None: the first of ``systems`` that has votes."""
    anchor_score: float = 1000.0
    """The anchor's score on the Elo-like scale (400 points: odds of 10 to 1)."""
    bootstrap_rounds: int = Field(default=1000, ge=20, le=100_000)
    """Rounds of the bootstrap that resamples whole raters for the intervals."""
    seed: int = 0
    """The bootstrap's seed: the same votes and seed give the same intervals."""
    strength: Literal["ignore", "graded"] = "ignore"
    """How a preference item's strength enters the fit: ``ignore``, a win is a win;
    ``graded``, "much" is a whole win and "slightly" ``slightly`` of a win (the rest for the
    other side); "no preference" is a tie either way. ``graded`` needs ``ties: half``."""
    slightly: float = Field(default=0.75, ge=0.5, le=1)
    """With ``strength: graded``, the share of a win a "slightly" preference counts: from 0.5
    (a tie) to 1 (a whole win); 0.75 is halfway."""

    @model_validator(mode="after")
    def _graded_with_half_ties(self) -> PairwiseChoices:
        if self.strength == "graded" and self.ties != "half":
            raise ValueError(
                "strength: graded counts part of a win as part of a tie, which needs"
                " ties: half (Davidson's model has ties of its own)"
            )
        return self


class Examples(_Model):
    """Which conversations the report shows whole as examples (docs/report.md)."""

    sessions: tuple[str, ...] = ()
    """Session ids (as the console and the export name them) shown under their system before
    any drawn: conversations the study marks as telling. One not in the database is named in
    the report."""
    scenarios: tuple[str, ...] = ()
    """Scenario ids (of ``scenarios``) the drawn examples come from; none: every scenario."""
    per_system: int = Field(default=2, ge=1, le=20)
    """Conversations shown per system, marked ones first, the rest drawn with the study's
    seed."""


class Study(_Model):
    """A study: its systems under test, scenarios, questionnaires, design and every sentence
    the bot says."""

    id: str = Field(min_length=1, max_length=64)
    """The study's name in the database, the report and ``ozlab demo --study``."""
    title: str
    """The study's title, shown in the report."""
    texts: Texts
    """Every sentence the bot says outside scenarios and questionnaires; ``welcome``,
    ``consent`` and ``declined`` must be written, the others have English defaults."""
    invite_codes: tuple[str, ...] = ()
    """Codes any number of participants may use (``/start CODE``); single-use codes are
    made with ``ozlab invite`` and live in the database."""
    recruitment: Recruitment | None = None
    """Participants come from a recruitment platform and get its codes at the end."""
    systems: tuple[SystemSpec, ...] = Field(min_length=1)
    """The systems under test, each with its adapter ``type``; the design assigns them."""
    scenarios: tuple[str, ...] = Field(min_length=1)
    """Scenario ids, looked up in ``scenarios/<id>.yaml`` beside the study, then in ozlab's
    library."""
    hold_after_consent: bool = False
    """Lab studies: participants wait after consent until an experimenter starts their
    session from the wizard console."""
    systems_take_commands: bool = False
    """Pass ``/commands`` the bot does not know on to the system under test as dialogue
    (for systems that have commands of their own); otherwise the bot answers them."""
    screening: tuple[str, ...] = ()
    """Questionnaires before the study; their ``eligible_if`` decides who takes part."""
    post_study: tuple[str, ...] = ()
    """Questionnaires (ids) asked once, after the last task."""
    design: Design = Design()
    """How participants are assigned scenarios and systems."""
    success_item: str | None = None
    """A yes/no item of a post-task questionnaire (``task.done``) whose answer says whether
    the participant did the task: it decides success for a system whose own events and tool
    calls do not (a language model without tools)."""
    success_judge: Judge | None = None
    """A language model that reads each conversation of a system that cannot report success
    itself against its scenario's ``success_criterion`` and answers yes or no
    (``ozlab judge run --success``): the last source of task success, after a wizard's
    judgement. The same fields as a job's ``judges``; none: no model judge decides it."""
    timing: Timing = Timing()
    """Reminders and abandonment of silent participants."""
    retention: Seconds | None = None
    """How long a participant's data is kept after their last activity (``90d``);
    ``ozlab erase --expired`` erases those past it. None: kept until erased by hand."""
    withdrawals_by_system: bool = False
    """Count withdrawals per system as well as per study (the report shows both)."""
    annotation_jobs: tuple[str, ...] = ()
    """Annotation jobs rating this study's sessions afterwards: ids of files in
    ``<study dir>/jobs/`` or shipped, or paths relative to the study file."""
    language: str = "en"
    """The language of ``texts``; participants whose Telegram is set to another language
    get its ``translations`` where given."""
    translations: dict[str, dict[str, str]] = {}
    """Language code → {texts field: sentence} for the sentences that differ."""
    languages: tuple[Annotated[str, Field(pattern=r"^[a-z]{2,3}$")], ...] = ()
    """Further languages the study is offered in, even where nothing of it is translated
    yet: their participants get the bot's default sentences in them, and ``ozlab check``
    lists what is missing in each."""
    side_by_side: SideBySide = SideBySide()
    """Side-by-side tasks: whether the systems' names are revealed after a vote, and the
    names each system might call itself (a reply naming its own system is flagged)."""
    pairwise: PairwiseChoices = PairwiseChoices()
    """How the report's pairwise statistics treat ties and "both bad" votes, which system
    anchors the scores, and the bootstrap's rounds and seed."""
    examples: Examples = Examples()
    """The example conversations of the report: marked sessions or scenarios, how many."""
    speech: Speech = Speech()
    """The speech engines of tasks with voice notes, and whether recordings are kept."""
    stress_model: OpenAISystem | None = None
    """An OpenAI-compatible endpoint (settings as for an ``openai`` system) that proposes
    stress tests for a person to review and may judge replays (``ozlab stress``); never a
    system under test."""
    _texts_in: dict[str, tuple[Study, Texts]] = PrivateAttr(default_factory=dict)
    """Texts per language, made once; each entry names its study, because ``model_copy``
    shares this dict between a study and its copies."""

    @model_validator(mode="after")
    def _known_text_fields(self) -> Study:
        known = set(Texts.model_fields)
        problems: list[tuple[Loc, str, object]] = [
            (("translations", language, field), f"no sentence {field!r} in texts", field)
            for language, sentences in self.translations.items()
            for field in sentences
            if field not in known
        ]
        if self.speech.keep_audio and not (self.texts.audio_kept_note or "").strip():
            message = (
                "keeping voice recordings needs texts.audio_kept_note: the sentence ozlab adds"
                " to the consent text, saying what is kept, why and for how long"
            )
            problems.append((("speech", "keep_audio"), message, True))
        if problems:
            raise error_at("Study", problems)
        return self

    def texts_for(self, language: str | None) -> Texts:
        """The study's sentences in ``language`` (a Telegram code such as "it" or "en-GB";
        none: the study's own). Each sentence is, first found: the study's translation; the
        study's own words (a sentence it wrote and did not translate is still its own); the
        bot's default in that language; the default in the study's language."""
        code = code_of(language) or self.language
        cached = self._texts_in.get(code)
        if cached is not None and cached[0] is self:
            return cached[1]
        written = self.texts.model_fields_set
        ours, theirs = catalogue(code), catalogue(self.language)
        update = {
            field: ours.get(field) or theirs[field]
            for field in Texts.model_fields
            if field not in written and (field in ours or field in theirs)
        }
        if code != self.language:
            update |= self.translations.get(code, {})
        texts = self.texts.model_copy(update=update)
        self._texts_in[code] = (self, texts)
        return texts

    @model_validator(mode="after")
    def _unique_system_ids(self) -> Study:
        if repeats := repeated_ids("systems", self.systems):
            raise error_at("Study", repeats)
        known = {s.id for s in self.systems}
        unknown: list[tuple[Loc, str, object]] = [
            (("side_by_side", "names", system), f"no system {system!r} in systems", system)
            for system in self.side_by_side.names
            if system not in known
        ]
        anchor = self.pairwise.anchor
        if anchor is not None and anchor not in known:
            unknown.append((("pairwise", "anchor"), f"no system {anchor!r} in systems", anchor))
        unknown += [
            (("examples", "scenarios", i), f"no scenario {scenario!r} in scenarios", scenario)
            for i, scenario in enumerate(self.examples.scenarios)
            if scenario not in self.scenarios
        ]
        if unknown:
            raise error_at("Study", unknown)
        return self


class StudyBundle(_Model):
    """A study with every scenario and questionnaire it names, resolved and validated."""

    study: Study
    scenarios: dict[str, Scenario]
    questionnaires: dict[str, Questionnaire]
    stimuli: dict[str, tuple[Stimulus, ...]] = {}
    """Rating tasks' rows, by scenario id."""
    jobs: dict[str, AnnotationJob] = {}
    """The study's annotation jobs, by job id (their instruments are in questionnaires)."""
    tools: dict[str, dict[str, ToolSource]] = {}
    """Scenario id → tool name → where its results come from (read beside the scenario)."""
    _made: dict[object, tuple[StudyBundle, object]] = PrivateAttr(default_factory=dict)
    """What the engine asks on every step (the languages offered, translated scenarios),
    made once; each entry names its bundle, as ``model_copy`` shares this dict."""

    def _once(self, key: object, make: Callable[[], T]) -> T:
        # Through ``__pydantic_private__``: ``self._made`` goes by pydantic's ``__getattr__``
        # after a failed lookup, 30 times as long, and this runs on every step.
        private = self.__pydantic_private__
        made: dict[object, tuple[StudyBundle, object]] = (
            private["_made"] if private is not None else self._made
        )
        found = made.get(key)
        if found is not None and found[0] is self:
            return found[1]  # type: ignore[return-value]  # stored by this key's maker
        value = make()
        made[key] = (self, value)
        return value

    def scenario(self, scenario_id: str) -> Scenario:
        return self.scenarios[scenario_id]

    def questionnaire(self, questionnaire_id: str) -> Questionnaire:
        return self.questionnaires[questionnaire_id]

    def languages(self) -> tuple[str, ...]:
        """Every language the study is offered in, its own first: the ones it declares and
        the ones any of its parts (texts, scenarios, questionnaires) translates into."""

        def find() -> tuple[str, ...]:
            found = [self.study.language, *self.study.languages, *self.study.translations]
            for scenario in self.scenarios.values():
                found += scenario.translations
            for questionnaire in self.questionnaires.values():
                found += questionnaire.translations
            return tuple(dict.fromkeys(found))

        return self._once("languages", find)

    def language_for(self, language: str | None) -> str:
        """The language a participant gets: their Telegram language where the study is
        offered in it, else the study's own (never half in a language the study lacks)."""
        code = code_of(language)
        if not code or code == self.study.language:  # most participants: nothing to look up
            return self.study.language
        return code if code in self.languages() else self.study.language

    def texts_for(self, language: str | None) -> Texts:
        """The bot's sentences for a participant whose Telegram uses ``language`` (looked
        up once per language: the engine asks on every step)."""
        return self._once(
            ("texts", language), lambda: self.study.texts_for(self.language_for(language))
        )

    def scenario_in(self, scenario_id: str, language: str | None) -> Scenario:
        """A scenario with its words in the participant's language where translated."""
        scenario = self.scenarios[scenario_id]
        code = self.language_for(language)
        words = scenario.translations.get(code) if code != self.study.language else None
        if words is None:
            return scenario
        return self._once(
            (scenario_id, code),
            lambda: scenario.model_copy(update=words.model_dump(exclude_none=True)),
        )

    def questionnaire_in(self, questionnaire_id: str, language: str | None) -> Questionnaire:
        """A questionnaire with its words in the participant's language where translated."""
        return self.questionnaires[questionnaire_id].in_language(self.language_for(language))
