"""Studies and scenarios as data: the files a researcher edits instead of code."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from questionnaires.models import Questionnaire, error_at, repeated_ids
from scenarios.durations import Seconds
from scenarios.systems import SystemSpec


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Stimulus(_Model):
    """One thing to rate in a rating task (a row of its CSV or JSONL file)."""

    id: str
    fields: dict[str, str]


Fact = str | int | float | bool


class Check(_Model):
    """One test on a field of what a system reported doing (its success event's data):
    exactly one of ``equals``, ``one_of``, ``not_in`` or ``contains`` (for a list field)."""

    equals: Fact | None = None
    one_of: tuple[Fact, ...] = ()
    not_in: tuple[Fact, ...] = ()
    contains: Fact | None = None

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


class Scenario(_Model):
    """A task a participant performs: a dialogue with a system, or rating given material."""

    id: str = Field(min_length=1, max_length=64)
    kind: Literal["dialogue", "rating"] = "dialogue"
    title: str
    brief: str = Field(min_length=1)
    goal: str | None = None
    """What the participant should achieve, for the experimenters and the report."""
    success: str | None = None
    """How success is decided, in words (the system reports ``task_success``)."""
    success_if: dict[str, Check] = {}
    """When the task counts as done correctly: tests on the fields of what the system
    reported doing with ``task_success`` (the demo shop: the game added, with ``title``,
    ``genres`` and ``platforms``). Empty: the report cannot tell correct from reported."""
    expected_duration: Seconds | None = None
    max_exchanges: int | None = Field(default=None, ge=1)
    time_limit: Seconds | None = None
    opening_line: str | None = None
    closing_line: str | None = None
    system_prompt: str | None = None
    """For LLM systems: replaces the system's own prompt in this scenario."""
    post_task: tuple[str, ...] = ()
    exchange: tuple[str, ...] = ()
    """Questionnaires asked after each system reply, without blocking the chat."""
    stimuli: str | None = None
    """Rating tasks: a CSV or JSONL file (beside the scenario file) with one row per item."""
    stimulus_template: str | None = None
    """Rating tasks: how a row is shown, with ``{column}`` fields filled from the row."""
    rate_with: tuple[str, ...] = ()
    """Rating tasks: the questionnaires answered for every row."""
    translations: dict[str, ScenarioText] = {}


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
    seed: int = 0
    systems: Literal["between", "within"] = "between"
    """``between``: one system for all of a participant's tasks; ``within``: each task
    with another system, so every participant meets every system."""
    tasks_per_participant: int | None = Field(default=None, ge=1)
    """How many scenarios each participant plays (IDIAL: 3); all of them if not set."""
    order: Literal["fixed", "random"] = "fixed"
    """The order of a participant's scenarios (``latin_square`` decides it itself)."""


class ScenarioText(_Model):
    """A scenario's words in another language."""

    title: str | None = None
    brief: str | None = None
    opening_line: str | None = None
    closing_line: str | None = None


class Timing(_Model):
    reminder_after: Seconds = 600
    abandon_after: Seconds = 3600
    close_abandoned: bool = False

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


class Recruitment(_Model):
    """A recruitment platform that pays participants by code (Prolific and the like).

    The study's link carries the participant's platform id as the ``/start`` payload:
    ``https://t.me/BOT?start=pid_{{%PROLIFIC_PID%}}`` (the bot reads what follows ``pid_``
    and stores it only sealed with the study secret). At the end each participant is shown
    the code for how their part ended, with the platform's return link.
    """

    platform: Literal["prolific"] = "prolific"
    completion_code: str = Field(min_length=1, max_length=64)
    screened_out_code: str | None = Field(default=None, min_length=1, max_length=64)
    declined_code: str | None = Field(default=None, min_length=1, max_length=64)
    timed_out_code: str | None = Field(default=None, min_length=1, max_length=64)
    return_link: str = "https://app.prolific.com/submissions/complete?cc={code}"
    """Where a participant goes back to the platform; ``{code}`` is filled in."""

    @model_validator(mode="after")
    def _code_in_link(self) -> Recruitment:
        if "{code}" not in self.return_link:
            raise ValueError("return_link must contain {code}, where the code goes")
        return self


class Texts(_Model):
    """Every sentence the bot says that is not part of a scenario or an instrument."""

    welcome: str
    consent: str
    consent_accept: str = "I agree"
    consent_decline: str = "I do not agree"
    declined: str
    invite_required: str = "This study needs an invitation code: send /start followed by it."
    invite_invalid: str = "That invitation code is not valid for this study."
    invite_used: str = (
        "That invitation code has already been used. Please ask the researcher for a new one."
    )
    platform_code: str = (
        "Your code for {platform} is {code}. Open this link to return to {platform}: {link}"
    )
    payment_note: str = (
        "You take part through {platform}. If you withdraw, we keep only your {platform} ID"
        " and the time you spent, so that you can be paid for it."
    )
    brief_heading: str = "Your task"
    brief_footer: str = (
        "Chat with the assistant to complete the task. When you want to stop, send /done "
        "or tap the button below."
    )
    finish_button: str = "Finish task"
    consent_pending: str = "Please answer the agreement above first by tapping one of its buttons."
    edit_ignored: str = "Edited messages are not passed on; please send a new message instead."
    text_only: str = "Please send text messages only; I cannot read stickers, photos or voice."
    resumed: str = "Welcome back! We continue where you left off."
    reminder: str = "Are you still there? Just reply to continue where you left off."
    abandoned_closed: str = "This session was closed after a long silence. Thank you for your time."
    system_error: str = "Sorry, the assistant could not answer. Please send your message again."
    system_slow: str = "Sorry, the assistant is taking long. Please send your message again."
    wait_for_reply: str = "One moment please: the answer to your last message is on its way."
    paused: str = "The session is paused for a moment. Please wait; we will continue shortly."
    pause_over: str = "Thank you for waiting! You can continue now."
    held: str = "Thank you! Please wait: the experimenter will start your session in a moment."
    task_over: str = "This task is over."
    questionnaire_intro: str = "Please rate the conversation you just had."
    skip_button: str = "Skip"
    done_button: str = "Done"
    examples_button: str = "Examples"
    type_your_answer: str = "(Type your answer, up to {limit} characters.)"
    pick_options: str = "Please tap the options that apply, then Done."
    pick_at_least_one: str = "Please choose at least one option."
    not_eligible: str = (
        "Thank you for your answers! This study is looking for other participants, so it "
        "ends here for you."
    )
    tap_a_button: str = (
        "Please tap one of the buttons above, or type a number from {low} to {high}."
    )
    text_too_long: str = "That is a bit long: please keep it under {limit} characters."
    question_pending: str = "Please answer the question above first."
    already_recorded: str = "Your answer was already recorded."
    unknown_command: str = (
        "I know two commands: /start shows where you are, /done finishes the task."
        " Anything else you write goes to the assistant."
    )
    thanks: str = "Thank you for taking part!"
    finished: str = "You have already completed this study. Thank you!"
    declined_before: str = (
        "You did not agree to take part. Send /start to read the agreement again."
    )
    withdraw_confirm: str = (
        "Do you want to withdraw from the study? Everything you sent and answered here is "
        "then erased for good and cannot be recovered."
    )
    withdraw_yes: str = "Yes, withdraw and erase"
    withdraw_no: str = "No, continue"
    withdrawn: str = (
        "You have withdrawn. Erased: your messages and the assistant's replies, your "
        "answers to questionnaires, your sessions, what the experimenters noted about them, "
        "and your encrypted chat id. Only an anonymous count of withdrawals remains. Send "
        "/start to take part again as a new participant."
    )
    withdraw_cancelled: str = "You are still taking part: nothing was erased."
    nothing_to_withdraw: str = "Nothing about you is stored in this study."
    consent_withdraw_note: str = (
        "You can withdraw at any time with /withdraw: everything you sent is then erased."
    )
    help_not_started: str = "Send /start to read about the study and take part."
    help_consent: str = "You are at the agreement above: tap one of its buttons to answer."
    help_declined: str = "You did not agree to take part. Send /start to read the agreement again."
    help_waiting: str = (
        "Please wait: your tasks are being prepared, or an experimenter starts them."
    )
    help_dialogue: str = (
        "You are on task {n} of {m}: chat with the assistant to complete it, and send /done "
        "when you want to stop."
    )
    help_rating: str = "You are on task {n} of {m}: rate each row with the buttons under it."
    help_questionnaire: str = "You are answering a questionnaire: tap a button or type your answer."
    help_over: str = "Your part in this study is over. Thank you!"
    help_commands: str = (
        "Commands: /help shows this, /done finishes the current task, /withdraw leaves the "
        "study and erases everything you sent."
    )
    command_help: str = "Where you are and what you can do"
    command_done: str = "Finish the current task"
    command_withdraw: str = "Leave the study and erase your data"


class Study(_Model):
    id: str = Field(min_length=1, max_length=64)
    title: str
    texts: Texts
    invite_codes: tuple[str, ...] = ()
    """Codes any number of participants may use (``/start CODE``); single-use codes are
    made with ``ozlab invite`` and live in the database."""
    recruitment: Recruitment | None = None
    """Participants come from a recruitment platform and get its codes at the end."""
    systems: tuple[SystemSpec, ...] = Field(min_length=1)
    scenarios: tuple[str, ...] = Field(min_length=1)
    hold_after_consent: bool = False
    """Lab studies: participants wait after consent until an experimenter starts their
    session from the wizard console."""
    systems_take_commands: bool = False
    """Pass ``/commands`` the bot does not know on to the system under test as dialogue
    (for systems that have commands of their own); otherwise the bot answers them."""
    screening: tuple[str, ...] = ()
    """Questionnaires before the study; their ``eligible_if`` decides who takes part."""
    post_study: tuple[str, ...] = ()
    design: Design = Design()
    timing: Timing = Timing()
    retention: Seconds | None = None
    """How long a participant's data is kept after their last activity (``90d``);
    ``ozlab erase --expired`` erases those past it. None: kept until erased by hand."""
    withdrawals_by_system: bool = False
    """Count withdrawals per system as well as per study (the report shows both)."""
    language: str = "en"
    """The language of ``texts``; participants whose Telegram is set to another language
    get its ``translations`` where given."""
    translations: dict[str, dict[str, str]] = {}
    """Language code → {texts field: sentence} for the sentences that differ."""

    @model_validator(mode="after")
    def _known_text_fields(self) -> Study:
        known = set(Texts.model_fields)
        problems = [
            (("translations", language, field), f"no sentence {field!r} in texts", field)
            for language, sentences in self.translations.items()
            for field in sentences
            if field not in known
        ]
        if problems:
            raise error_at("Study", problems)
        return self

    def texts_for(self, language: str | None) -> Texts:
        """The study's sentences in ``language`` (a Telegram code such as "it" or "en-GB")."""
        code = (language or "").split("-")[0].lower()
        overrides = self.translations.get(code) if code != self.language else None
        return self.texts.model_copy(update=overrides) if overrides else self.texts

    @model_validator(mode="after")
    def _unique_system_ids(self) -> Study:
        if repeats := repeated_ids("systems", self.systems):
            raise error_at("Study", repeats)
        return self


class StudyBundle(_Model):
    """A study with every scenario and questionnaire it names, resolved and validated."""

    study: Study
    scenarios: dict[str, Scenario]
    questionnaires: dict[str, Questionnaire]
    stimuli: dict[str, tuple[Stimulus, ...]] = {}
    """Rating tasks' rows, by scenario id."""

    def scenario(self, scenario_id: str) -> Scenario:
        return self.scenarios[scenario_id]

    def questionnaire(self, questionnaire_id: str) -> Questionnaire:
        return self.questionnaires[questionnaire_id]
