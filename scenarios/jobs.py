"""Annotation jobs as data: who rates which stored conversations afterwards, with what.

An annotation job is a YAML file beside the study (``<study dir>/jobs/<id>.yaml``, then the
jobs ozlab ships); a study names its jobs under ``annotation_jobs``. Annotators are not
participants: they rate what participants and systems said, from outside the conversation
(HRI CUES, the explainable-recommendation questionnaire). The file says which sessions are
rated, at which level (each exchange, the whole session), with which instruments, by how
many annotators, when a further annotator adjudicates, whether an exchange may be seen
again, and what extra information an item shows. ``scenarios.loading`` loads and checks it
with file, line and field like every other file.

A job of ``kind: pairwise`` (ACUTE-Eval) rates pairs instead: two stored conversations, one
per system, side by side, with forced-choice questions about one speaker of each.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from scenarios.durations import Seconds
from scenarios.systems import check_env_name, check_url

_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class Sample(_Model):
    """A seeded random sample of sessions, stratified by system: each system gets a share
    proportional to its sessions, so a sample never over-represents one system."""

    n: int = Field(ge=1)
    """How many sessions to rate in all."""
    seed: int = 0
    """The draw starts from it: the same seed, the same sample."""


class SessionChoice(_Model):
    """Which stored sessions are rated: every ended session of the named studies (none: the
    study that names the job), narrowed to the named systems and scenarios, then sampled."""

    studies: tuple[str, ...] = ()
    """Study ids whose sessions are rated; empty: the study that names the job."""
    systems: tuple[str, ...] = ()
    """Only sessions with these systems; empty: every system."""
    scenarios: tuple[str, ...] = ()
    """Only sessions of these scenarios; empty: every scenario."""
    sample: Sample | None = None
    """A random sample of those sessions; none: every one of them."""


class Instruments(_Model):
    """The questionnaires (ids from the study's or the shipped library) asked per level:
    ``exchange`` after each system reply of a conversation, ``session`` once per
    conversation, after its last exchange, ``pair`` once per pair of conversations (a
    pairwise job only: forced choices between "Speaker 1" and "Speaker 2")."""

    exchange: tuple[str, ...] = ()
    """Questionnaires rated after each system reply of a conversation."""
    session: tuple[str, ...] = ()
    """Questionnaires rated once per conversation, after its last exchange."""
    pair: tuple[str, ...] = ()
    """Questionnaires rated once per pair of conversations (``kind: pairwise``)."""

    @model_validator(mode="after")
    def _something_rated(self) -> Instruments:
        if not self.exchange and not self.session and not self.pair:
            raise ValueError(
                "name the instruments of at least one level: exchange, session or pair"
            )
        return self


class Disagreement(_Model):
    """When two annotators' first ratings of a target call for one more annotator: a
    yes/no or choice item answered differently, or a scale item rated more than so many
    points apart. Free text never counts."""

    choice_differs: bool = False
    """A yes/no or choice item answered differently calls for another annotator."""
    scale_differs_by_more_than: int | None = Field(default=None, ge=0)
    """A scale item rated more than this many points apart calls for another annotator
    (0: any difference)."""

    @model_validator(mode="after")
    def _some_rule(self) -> Disagreement:
        if not self.choice_differs and self.scale_differs_by_more_than is None:
            raise ValueError(
                "say when annotators disagree: choice_differs: true, "
                "scale_differs_by_more_than: N, or both"
            )
        return self


class Adjudication(_Model):
    """One more annotator for the targets where the first ones disagree."""

    third_annotator_when: Disagreement
    """When the first annotators disagree enough to ask one more."""


class ExtraInformation(_Model):
    """Information an annotator needs for some items and must not see before them (XRec:
    questions 11-13 after checking the recommended movie's information), shown just before
    the first of ``items``.

    ``from: demo_catalogue``: the demo shop's catalogue entries of the games the rated
    system reply names. (A system's own per-reply data is not stored with each reply yet,
    so no other source is offered.)"""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)

    items: tuple[str, ...] = Field(min_length=1)
    """Item ids; the information is shown just before the first of them, never earlier."""
    source: Literal["demo_catalogue"] = Field(alias="from")
    """``from`` in files: where the information comes from (``demo_catalogue``)."""
    heading: str = Field(min_length=1)
    """The heading the annotator reads above the information."""


class Example(_Model):
    """A worked example in the brief: an exchange and the rating it deserves, and why."""

    exchange: str = Field(min_length=1)
    """The example exchange, as the annotator would see it."""
    rating: str = Field(min_length=1)
    """The rating it deserves."""
    why: str = Field(min_length=1)
    """Why it deserves that rating."""


class Brief(_Model):
    """What an annotator reads before the first target: the protocol's guidelines, with
    examples (shown again on request)."""

    guidelines: str = Field(min_length=1)
    """The protocol's guidelines, shown before the first target and again with ``/brief``."""
    examples: tuple[Example, ...] = ()
    """Worked examples, shown after the guidelines."""


class KnownExchange(_Model):
    """One exchange of an onboarding conversation, written in the job file."""

    user: str = Field(min_length=1)
    """What the user said."""
    system: str = Field(min_length=1)
    """What the speaker judged answered."""


class KnownPair(_Model):
    """An onboarding pair (ACUTE-Eval's quality check): two conversations written in the job
    file, one of them plainly better on every question, and which one."""

    id: str = Field(pattern=_ID_PATTERN)
    """The pair's id (its target is ``onboarding:<id>``)."""
    better: tuple[KnownExchange, ...] = Field(min_length=1)
    """The conversation whose speaker is the known answer to every question."""
    worse: tuple[KnownExchange, ...] = Field(min_length=1)
    """The conversation whose speaker is plainly worse."""


class Onboarding(_Model):
    """Pairs with a known answer, given to every annotator before any real pair; an
    annotator who picks the known answer less often than ``threshold`` gets no real pair
    (ACUTE-Eval: 0.75)."""

    pairs: tuple[KnownPair, ...] = Field(min_length=1)
    """The known pairs, shown first, in this order (which side is first is drawn)."""
    threshold: float = Field(default=0.75, ge=0.0, le=1.0)
    """The share of onboarding answers an annotator must get right to go on."""


class Pairwise(_Model):
    """How a pairwise job builds its pairs of conversations and who rates them."""

    speaker: Literal["system", "user"] = "system"
    """The speaker the questions are about: the system (ACUTE-Eval's model speaker) or the
    user. The other one's lines are shown too, labelled as the partner."""
    same_scenario: bool = True
    """Both conversations of a pair come from the same scenario."""
    pairs_per_system_pair: int = Field(default=10, ge=1)
    """How many pairs of conversations each pair of systems gets (balanced selection), or
    how many pairs are drawn in all, per pair of systems on average (adaptive)."""
    selection: Literal["balanced", "adaptive"] = "balanced"
    """``balanced``: every pair of systems gets as many pairs. ``adaptive`` (Chatbot
    Arena's active sampling): after each vote the next pair goes to the pair of systems
    whose preference interval one more vote would narrow most."""
    pairs_per_annotator: int | None = Field(default=None, ge=1)
    """At most this many real pairs per annotator (ACUTE-Eval gives each a few); none: no
    limit."""
    onboarding: Onboarding | None = None
    """Known pairs before the real ones; none: no quality check."""


class Judge(_Model):
    """A language model that rates the job's targets beside the annotators, through an
    OpenAI-compatible server, with the same instruments, brief and examples they get. Its
    answers are kept apart (a rater of its own kind) and compared with people's. A study's
    ``success_judge`` has the same fields and decides task success instead."""

    id: str = Field(pattern=_ID_PATTERN)
    """The judge's name in the database and the report (``gpt-judge``)."""
    url: str
    """The server's base address; ``/v1/chat/completions`` is added unless already there."""
    url_env: str | None = None
    """An environment variable that, when set, gives the server's address in place of
    ``url`` (as a system's ``url_env``): the job file keeps a local default."""
    model: str = Field(min_length=1)
    """The model's name as the server knows it."""
    api_key_env: str | None = None
    """The environment variable holding the API key (never the key itself); none for a
    local server without a key."""
    temperature: float = Field(default=0.0, ge=0, le=2)
    """Sampling temperature (0: the most repeatable answers)."""
    seed: int | None = None
    """Sent with each call to servers that honour it; none: not sent."""
    prompt: str | None = None
    """Words put before the built-in instructions (the judge's role, the study's context);
    none: the built-in instructions only."""
    max_tokens: int = Field(default=16, ge=1, le=4096)
    """At most this many tokens per answer: a verdict is one value."""
    timeout: float = Field(default=60.0, gt=0)
    """Seconds to wait for one answer."""
    family: str | None = Field(default=None, min_length=1, max_length=64)
    """The judge's model family, as the study names the systems' (``family`` of a system):
    the report checks whether it prefers the systems of its own family more than people
    do; none: not checked."""

    _url = field_validator("url")(classmethod(lambda cls, v: check_url(v)))
    _env = field_validator("api_key_env", "url_env")(classmethod(lambda cls, v: check_env_name(v)))


JOB_LINK_PREFIX = "ann-"
PLATFORM_ID_MARK = "_pid_"
_LINK_JOB = r"[A-Za-z0-9][A-Za-z0-9_-]*"
_LINK_LENGTH = 64
"""Telegram's limit on a ``/start`` payload (``A-Za-z0-9_-``)."""
_PLATFORM_ID_LENGTH = 24
"""A Prolific participant id (24 hexadecimal digits): the job's link must leave it room."""


class RatedTargetBonus(_Model):
    """What ``ozlab prolific bonus --job`` pays each annotator, in the platform study's
    currency (a decimal: 0.10), for each target they finished rating."""

    per_rated_target: Decimal = Field(gt=0, decimal_places=2)
    """For each target (an exchange, a conversation, a pair) the annotator finished."""


class JobRecruitment(_Model):
    """Annotators recruited on a platform (Prolific), in a platform study of the job's own.

    The job's link carries the annotator's platform id:
    ``https://t.me/BOT?start=ann-<JOB>_pid_{{%PROLIFIC_PID%}}``. Whoever opens it is a new
    annotator of the job under a pseudonym, their platform id stored only sealed. An
    annotator who rated their share is shown the completion code with the platform's return
    link; one who fails a pairwise job's onboarding, the ``onboarding_failed_code``."""

    platform: Literal["prolific"] = "prolific"
    """The platform; Prolific today."""
    study_id: str = Field(pattern=r"^[A-Za-z0-9]{1,64}$")
    """The job's study on the platform (``ozlab prolific … --job`` asks about it)."""
    completion_code: str = Field(min_length=1, max_length=64)
    """Shown with the return link to an annotator who rated their share."""
    onboarding_failed_code: str | None = Field(default=None, min_length=1, max_length=64)
    """Shown to an annotator below a pairwise job's onboarding threshold; none: no code."""
    return_link: str = "https://app.prolific.com/submissions/complete?cc={code}"
    """Where an annotator goes back to the platform; ``{code}`` is filled in."""
    targets_per_annotator: int | None = Field(default=None, ge=1)
    """An annotator's share: they are given at most this many targets, and the completion
    code once they rated that many; none: every target the assignment gives them."""
    bonus: RatedTargetBonus | None = None
    """The bonus per rated target (``ozlab prolific bonus --job``)."""

    @model_validator(mode="after")
    def _code_in_link(self) -> JobRecruitment:
        if "{code}" not in self.return_link:
            raise ValueError("return_link must contain {code}, where the code goes")
        return self


def job_link_payload(job: str, platform_id: str) -> str:
    """The ``/start`` payload of a recruiting job's link for one platform id."""
    return f"{JOB_LINK_PREFIX}{job}{PLATFORM_ID_MARK}{platform_id}"


class AnnotationJob(_Model):
    """One annotation job: its id equals its file name and names it everywhere (the
    database, ``ozlab invite --job``, ``ozlab import annotations --job``)."""

    id: str = Field(pattern=_ID_PATTERN)
    """The job's id, equal to its file name."""
    title: str = Field(min_length=1)
    """What annotators are told they rate (their welcome and ``/help`` name it)."""
    kind: Literal["ratings", "pairwise"] = "ratings"
    """``ratings``: exchanges and conversations rated one at a time. ``pairwise``
    (ACUTE-Eval): two conversations of two systems side by side, rated with ``rate.pair``'s
    forced choices, as ``pairwise`` says."""
    pairwise: Pairwise | None = None
    """How the pairs are built and given out (``kind: pairwise`` only)."""
    sessions: SessionChoice = SessionChoice()
    """Which stored sessions are rated; by default every ended session of the study."""
    rate: Instruments
    """The questionnaires rated per exchange and per conversation."""
    annotators: int = Field(ge=1, le=50)
    """How many annotators rate every target in the first round."""
    seed: int = 0
    """Who gets which conversation is drawn from it: the same seed, the same assignment."""
    adjudication: Adjudication | None = None
    """One more annotator where the first ones disagree; none: no adjudication."""
    seen_once_in_order: bool = False
    """Each exchange shown once, in order, never revisited (no /back): HRI CUES."""
    with_next_message: bool = False
    """An exchange is shown with the participant's next message: HRI CUES rates "the robot's
    response and the participant's subsequent input"."""
    drop_out_after: Seconds | None = None
    """An annotator silent this long with targets open counts as dropped out: their open
    targets go to someone else. None: only an annotator the researcher drops (``ozlab
    annotators drop``) loses them."""
    on_withdrawal: Literal["erase", "keep_unlinked"] = "erase"
    """What an annotator's withdrawal (their ``/withdraw``, or ``ozlab erase A-7KQ2``) does
    with their ratings, as the consent they gave says: ``erase`` them with everything else
    of theirs, or ``keep_unlinked``: keep them for the research under a new pseudonym that
    nothing links to them (their chat id, code and pseudonym erased all the same). Either
    way the targets they had open go to other annotators."""
    extra_information: tuple[ExtraInformation, ...] = ()
    """Information some items need, shown just before them and never before."""
    brief: Brief
    """What annotators read before their first target."""
    judges: tuple[Judge, ...] = ()
    """Language models that rate every target too (``ozlab judge run``), beside the
    annotators, never in their place."""
    recruitment: JobRecruitment | None = None
    """Annotators recruited on a platform through the job's own link, paid per share and
    rated target; none: annotators are invited with codes (``ozlab invite --annotators``)."""

    @model_validator(mode="after")
    def _kind_fits(self) -> AnnotationJob:
        if self.kind == "pairwise":
            if self.rate.exchange or self.rate.session or not self.rate.pair:
                raise ValueError(
                    "a pairwise job rates pairs only: name its instruments under rate.pair"
                )
            if self.adjudication is not None:
                raise ValueError("a pairwise job has no adjudication: each vote stands alone")
        else:
            if self.rate.pair:
                raise ValueError("rate.pair needs kind: pairwise")
            if self.pairwise is not None:
                raise ValueError("pairwise settings need kind: pairwise")
        return self

    @model_validator(mode="after")
    def _link_fits(self) -> AnnotationJob:
        if self.recruitment is None:
            return self
        room = _LINK_LENGTH - len(job_link_payload("", "x" * _PLATFORM_ID_LENGTH))
        if (
            not re.fullmatch(_LINK_JOB, self.id)
            or PLATFORM_ID_MARK in self.id
            or len(self.id) > room
        ):
            raise ValueError(
                f"a job that recruits on a platform goes in its link: give it an id of at most"
                f" {room} letters, digits, - or _ (no dot, no {PLATFORM_ID_MARK!r})"
            )
        return self

    @field_validator("judges")
    @classmethod
    def _judges_apart(cls, judges: tuple[Judge, ...]) -> tuple[Judge, ...]:
        ids = [j.id for j in judges]
        if len(set(ids)) != len(ids):
            raise ValueError(f"each judge needs its own id ({', '.join(ids)})")
        return judges

    @property
    def pairing(self) -> Pairwise:
        """The pairwise settings (the defaults when the file gives none)."""
        return self.pairwise or Pairwise()

    def instruments(self) -> tuple[str, ...]:
        """Every instrument the job uses, exchange level first."""
        return tuple(dict.fromkeys((*self.rate.exchange, *self.rate.session, *self.rate.pair)))

    def annotators_needed(self) -> int:
        """Annotators a job needs at least: the first round's, plus one to adjudicate."""
        return self.annotators + (1 if self.adjudication is not None else 0)
