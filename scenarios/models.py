"""Studies and scenarios as data: the files a researcher edits instead of code."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from questionnaires.models import Questionnaire, error_at
from scenarios.durations import Seconds
from scenarios.systems import SystemSpec


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Scenario(_Model):
    """A task a participant performs with one system under test."""

    id: str = Field(min_length=1, max_length=64)
    title: str
    brief: str = Field(min_length=1)
    max_exchanges: int | None = Field(default=None, ge=1)
    time_limit: Seconds | None = None
    opening_line: str | None = None
    closing_line: str | None = None
    system_prompt: str | None = None
    """For LLM systems: replaces the system's own prompt in this scenario."""
    post_task: tuple[str, ...] = ()


class RandomDesign(_Model):
    """Each participant gets a system drawn at random from a generator seeded per study."""

    type: Literal["random"]
    seed: int = 0


Design = Annotated[RandomDesign, Field(discriminator="type")]


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


class Texts(_Model):
    """Every sentence the bot says that is not part of a scenario or an instrument."""

    welcome: str
    consent: str
    consent_accept: str = "I agree"
    consent_decline: str = "I do not agree"
    declined: str
    invite_required: str = "This study needs an invitation code: send /start followed by it."
    invite_invalid: str = "That invitation code is not valid for this study."
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
    task_over: str = "This task is over."
    questionnaire_intro: str = "Please rate the conversation you just had."
    skip_button: str = "Skip"
    examples_button: str = "Examples"
    tap_a_button: str = (
        "Please tap one of the buttons above, or type a number from {low} to {high}."
    )
    text_too_long: str = "That is a bit long: please keep it under {limit} characters."
    question_pending: str = "Please answer the question above first."
    already_recorded: str = "Your answer was already recorded."
    thanks: str = "Thank you for taking part!"
    finished: str = "You have already completed this study. Thank you!"
    declined_before: str = (
        "You did not agree to take part. Send /start to read the agreement again."
    )


class Study(_Model):
    id: str = Field(min_length=1, max_length=64)
    title: str
    texts: Texts
    invite_codes: tuple[str, ...] = ()
    systems: tuple[SystemSpec, ...] = Field(min_length=1)
    scenarios: tuple[str, ...] = Field(min_length=1)
    post_study: tuple[str, ...] = ()
    design: Design = RandomDesign(type="random")
    timing: Timing = Timing()

    @model_validator(mode="after")
    def _unique_system_ids(self) -> Study:
        first: dict[str, int] = {}
        repeats = []
        for index, system in enumerate(self.systems):
            if system.id in first:
                message = f"system id {system.id!r} is already used by systems[{first[system.id]}]"
                repeats.append((("systems", index, "id"), message, system.id))
            first.setdefault(system.id, index)
        if repeats:
            raise error_at("Study", repeats)
        return self


class StudyBundle(_Model):
    """A study with every scenario and questionnaire it names, resolved and validated."""

    study: Study
    scenarios: dict[str, Scenario]
    questionnaires: dict[str, Questionnaire]

    def scenario(self, scenario_id: str) -> Scenario:
        return self.scenarios[scenario_id]

    def questionnaire(self, questionnaire_id: str) -> Questionnaire:
        return self.questionnaires[questionnaire_id]
