"""Studies and scenarios as data: the files a researcher edits instead of code."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from questionnaires.models import Questionnaire, error_at, repeated_ids
from scenarios.durations import Seconds
from scenarios.jobs import AnnotationJob
from scenarios.sentences import SOURCE, catalogue, code_of
from scenarios.simulation import Simulation
from scenarios.systems import OpenAISystem, SystemSpec

_EN = catalogue(SOURCE)
"""The English default sentences (``scenarios/texts/en.yaml``): ``Texts`` defaults."""


T = TypeVar("T")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


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
    simulation: Simulation | None = Field(default=None, exclude=True)
    """How simulated participants (``ozlab demo``, ``ozlab pilot``) play this task; left
    out of the definition stored with the data (participants never see it)."""


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
    consent_accept: str = _EN["consent_accept"]
    consent_decline: str = _EN["consent_decline"]
    declined: str
    invite_required: str = _EN["invite_required"]
    invite_invalid: str = _EN["invite_invalid"]
    invite_used: str = _EN["invite_used"]
    platform_code: str = _EN["platform_code"]
    payment_note: str = _EN["payment_note"]
    brief_heading: str = _EN["brief_heading"]
    brief_footer: str = _EN["brief_footer"]
    finish_button: str = _EN["finish_button"]
    consent_pending: str = _EN["consent_pending"]
    edit_ignored: str = _EN["edit_ignored"]
    text_only: str = _EN["text_only"]
    resumed: str = _EN["resumed"]
    reminder: str = _EN["reminder"]
    abandoned_closed: str = _EN["abandoned_closed"]
    system_error: str = _EN["system_error"]
    system_slow: str = _EN["system_slow"]
    wait_for_reply: str = _EN["wait_for_reply"]
    paused: str = _EN["paused"]
    pause_over: str = _EN["pause_over"]
    held: str = _EN["held"]
    task_over: str = _EN["task_over"]
    questionnaire_intro: str = _EN["questionnaire_intro"]
    """Before the questionnaires after a task, about its conversation."""
    post_study_intro: str = _EN["post_study_intro"]
    """Before the questionnaires after the last task (the conversation is long gone)."""
    skip_button: str = _EN["skip_button"]
    done_button: str = _EN["done_button"]
    examples_button: str = _EN["examples_button"]
    type_your_answer: str = _EN["type_your_answer"]
    pick_options: str = _EN["pick_options"]
    pick_at_least_one: str = _EN["pick_at_least_one"]
    not_eligible: str = _EN["not_eligible"]
    tap_a_button: str = _EN["tap_a_button"]
    text_too_long: str = _EN["text_too_long"]
    question_pending: str = _EN["question_pending"]
    already_recorded: str = _EN["already_recorded"]
    unknown_command: str = _EN["unknown_command"]
    thanks: str = _EN["thanks"]
    finished: str = _EN["finished"]
    declined_before: str = _EN["declined_before"]
    withdraw_confirm: str = _EN["withdraw_confirm"]
    withdraw_yes: str = _EN["withdraw_yes"]
    withdraw_no: str = _EN["withdraw_no"]
    withdrawn: str = _EN["withdrawn"]
    withdraw_cancelled: str = _EN["withdraw_cancelled"]
    nothing_to_withdraw: str = _EN["nothing_to_withdraw"]
    consent_withdraw_note: str = _EN["consent_withdraw_note"]
    help_not_started: str = _EN["help_not_started"]
    help_consent: str = _EN["help_consent"]
    help_declined: str = _EN["help_declined"]
    help_waiting: str = _EN["help_waiting"]
    help_dialogue: str = _EN["help_dialogue"]
    help_rating: str = _EN["help_rating"]
    help_questionnaire: str = _EN["help_questionnaire"]
    help_over: str = _EN["help_over"]
    help_commands: str = _EN["help_commands"]
    command_help: str = _EN["command_help"]
    command_done: str = _EN["command_done"]
    command_withdraw: str = _EN["command_withdraw"]
    command_pause: str = _EN["command_pause"]
    command_brief: str = _EN["command_brief"]
    command_back: str = _EN["command_back"]
    # annotators (issue 11): they rate stored conversations, never participants
    ann_welcome: str = _EN["ann_welcome"]
    ann_brief_heading: str = _EN["ann_brief_heading"]
    ann_examples_heading: str = _EN["ann_examples_heading"]
    ann_example: str = _EN["ann_example"]
    ann_commands_back: str = _EN["ann_commands_back"]
    ann_commands_seen_once: str = _EN["ann_commands_seen_once"]
    ann_code_taken: str = _EN["ann_code_taken"]
    ann_code_unknown: str = _EN["ann_code_unknown"]
    ann_code_dropped: str = _EN["ann_code_dropped"]
    ann_code_already: str = _EN["ann_code_already"]
    ann_participant_chat: str = _EN["ann_participant_chat"]
    ann_annotator_chat: str = _EN["ann_annotator_chat"]
    ann_progress_exchange: str = _EN["ann_progress_exchange"]
    ann_progress_session: str = _EN["ann_progress_session"]
    ann_conversation_heading: str = _EN["ann_conversation_heading"]
    ann_conversation_more: str = _EN["ann_conversation_more"]
    ann_user: str = _EN["ann_user"]
    ann_system: str = _EN["ann_system"]
    ann_no_reply: str = _EN["ann_no_reply"]
    ann_paused: str = _EN["ann_paused"]
    ann_resumed: str = _EN["ann_resumed"]
    ann_back_refused: str = _EN["ann_back_refused"]
    ann_back_nothing: str = _EN["ann_back_nothing"]
    ann_back_done: str = _EN["ann_back_done"]
    ann_target_done: str = _EN["ann_target_done"]
    ann_target_moved: str = _EN["ann_target_moved"]
    ann_all_done: str = _EN["ann_all_done"]
    ann_nothing_yet: str = _EN["ann_nothing_yet"]
    ann_new_work: str = _EN["ann_new_work"]
    ann_help_rating: str = _EN["ann_help_rating"]
    ann_help_paused: str = _EN["ann_help_paused"]
    ann_help_idle: str = _EN["ann_help_idle"]


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
    _made: dict[object, tuple[StudyBundle, object]] = PrivateAttr(default_factory=dict)
    """What the engine asks on every step (the languages offered, translated scenarios),
    made once; each entry names its bundle, as ``model_copy`` shares this dict."""

    def _once(self, key: object, make: Callable[[], T]) -> T:
        found = self._made.get(key)
        if found is not None and found[0] is self:
            return found[1]  # type: ignore[return-value]  # stored by this key's maker
        value = make()
        self._made[key] = (self, value)
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
        """The bot's sentences for a participant whose Telegram uses ``language``."""
        return self.study.texts_for(self.language_for(language))

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
