"""Recruitment platforms (Prolific and the like): the ``/start`` payload that carries a
participant's platform id, and the code each way of ending earns.

The study's link is ``https://t.me/BOT?start=pid_<PLATFORM_ID>`` (Telegram allows 64
characters of ``A-Za-z0-9_-``). The runner seals the id before the engine sees it; the
engine only decides what is recorded and which code is shown.
"""

from __future__ import annotations

import re
from dataclasses import replace

from bot.core.vocabulary import EventKind, PaymentStatus, Stage
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.journey import Journey
from scenarios.jobs import JOB_LINK_PREFIX, PLATFORM_ID_MARK, AnnotationJob, JobRecruitment
from scenarios.models import Recruitment, StudyBundle, Texts

PAYLOAD_PREFIX = "pid_"
_PAYLOAD = re.compile(r"pid_([A-Za-z0-9_-]{1,60})")
_JOB_PAYLOAD = re.compile(
    rf"{JOB_LINK_PREFIX}([A-Za-z0-9][A-Za-z0-9_-]*?){PLATFORM_ID_MARK}([A-Za-z0-9_-]{{1,60}})"
)
_PLATFORM_NAMES = {"prolific": "Prolific"}


def platform_id(payload: str | None) -> str | None:
    """The platform id in a ``/start`` payload of the form ``pid_<id>``, else None."""
    found = _PAYLOAD.fullmatch(payload or "")
    return found.group(1) if found else None


def job_platform_id(payload: str | None) -> tuple[str, str] | None:
    """The job and the platform id in a recruiting job's ``/start`` payload of the form
    ``ann-<JOB>_pid_<id>``, else None."""
    found = _JOB_PAYLOAD.fullmatch(payload or "")
    return (found.group(1), found.group(2)) if found else None


def annotator_code(job: AnnotationJob, texts: Texts, ended: PaymentStatus | None) -> list[fx.Send]:
    """The platform's code for how a recruited annotator's part ended (their share rated,
    their onboarding failed), with the return link; nothing when the job gives none."""
    recruitment = job.recruitment
    if recruitment is None or ended is None:
        return []
    codes = {
        PaymentStatus.COMPLETED: recruitment.completion_code,
        PaymentStatus.SCREENED_OUT: recruitment.onboarding_failed_code,
    }
    code = codes.get(ended)
    if code is None:
        return []
    name, link = platform_name(recruitment), return_link(recruitment, code)
    return [fx.Send(texts.platform_code.format(platform=name, code=code, link=link))]


def platform_name(recruitment: Recruitment | JobRecruitment) -> str:
    return _PLATFORM_NAMES.get(recruitment.platform, recruitment.platform)


def return_link(recruitment: Recruitment | JobRecruitment, code: str) -> str:
    return recruitment.return_link.replace("{code}", code)


def code_for(recruitment: Recruitment, status: PaymentStatus) -> str | None:
    """The code the study gives for this ending (None: it gives none)."""
    match status:
        case PaymentStatus.COMPLETED:
            return recruitment.completion_code
        case PaymentStatus.SCREENED_OUT:
            return recruitment.screened_out_code
        case PaymentStatus.DECLINED:
            return recruitment.declined_code
        case PaymentStatus.TIMED_OUT:
            return recruitment.timed_out_code
        case PaymentStatus.STARTED | PaymentStatus.WITHDRAWN:
            return None


def ending(bundle: StudyBundle, texts: Texts, status: PaymentStatus) -> list[fx.Effect]:
    """The payment record's status and, where the study gives one, the code with the
    platform's return link; nothing for a study without recruitment."""
    if bundle.study.recruitment is None:
        return []
    return [fx.SetPaymentStatus(status), *code_message(bundle, texts, status)]


def code_message(bundle: StudyBundle, texts: Texts, status: PaymentStatus) -> list[fx.Effect]:
    """The code for this ending with the return link (again, for one who writes later);
    for an ending the study gives no code for, the platform's return instruction."""
    recruitment = bundle.study.recruitment
    if recruitment is None or status in (PaymentStatus.STARTED, PaymentStatus.WITHDRAWN):
        return []
    code = code_for(recruitment, status)
    if code is None:
        return return_instruction(bundle, texts)
    name, link = platform_name(recruitment), return_link(recruitment, code)
    return [fx.Send(texts.platform_code.format(platform=name, code=code, link=link))]


def return_instruction(bundle: StudyBundle, texts: Texts) -> list[fx.Effect]:
    """How to return the submission on the platform (nothing without recruitment)."""
    recruitment = bundle.study.recruitment
    if recruitment is None:
        return []
    return [fx.Send(texts.platform_return.format(platform=platform_name(recruitment)))]


def arrival(bundle: StudyBundle, platform_key: str | None) -> list[fx.Effect]:
    """A newcomer's platform id (sealed), recorded for payment in a recruitment study."""
    recruitment = bundle.study.recruitment
    if recruitment is None or platform_key is None:
        return []
    return [fx.RecordRecruitment(recruitment.platform, platform_key)]


_ENDED = {
    Stage.DECLINED: PaymentStatus.DECLINED,
    Stage.FINISHED: PaymentStatus.COMPLETED,
    Stage.INELIGIBLE: PaymentStatus.SCREENED_OUT,
    Stage.CLOSED: PaymentStatus.TIMED_OUT,
}


def bind(
    bundle: StudyBundle, texts: Texts, journey: Journey, start: ev.StartCommand
) -> tuple[Journey, list[fx.Effect]]:
    """A platform id on a later ``/start`` (the link opened again, or first opened after a
    bare ``/start``): bound if the participant has none, with the payment record begun as
    their part stands (arrived when they did; ended if it has); the same id again changes
    nothing; another id is refused and logged, and the first one stays."""
    recruitment = bundle.study.recruitment
    key, tag = start.platform_key, start.platform_tag
    if recruitment is None or key is None or tag is None or journey.platform_tag == tag:
        return journey, []
    if journey.platform_tag is not None:
        name = platform_name(recruitment)
        return journey, [
            fx.RecordEvent(EventKind.PLATFORM_ID_REFUSED, data={"platform": recruitment.platform}),
            fx.Send(texts.platform_id_other.format(platform=name)),
        ]
    status = _ENDED.get(journey.stage, PaymentStatus.STARTED)
    since = (journey.started_at, journey.last_activity_at)
    record = fx.RecordRecruitment(recruitment.platform, key, status, since)
    return replace(journey, platform_tag=tag), [record]


def consent_note(bundle: StudyBundle, texts: Texts) -> str:
    """What the consent says about the payment record kept after a withdrawal."""
    recruitment = bundle.study.recruitment
    if recruitment is None:
        return ""
    return texts.payment_note.format(platform=platform_name(recruitment))
