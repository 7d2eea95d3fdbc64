"""What an annotator reads: the job's brief, the conversation up to the rated exchange, and
where they stand. Plain text in the study's words (``scenarios/texts``); never another
annotator's rating, never a participant's self-report (only the transcript is shown)."""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.annotation import AnnotationTask, TranscriptExchange
from bot.core.vocabulary import AnnotationLevel
from bot.engine.annotating.pairs import pair_conversations
from scenarios.jobs import AnnotationJob
from scenarios.models import Texts


def brief(job: AnnotationJob, texts: Texts) -> list[str]:
    """The guidelines, the worked examples, and the commands (with /back or without)."""
    parts = [f"{texts.ann_brief_heading}\n\n{job.brief.guidelines}"]
    if job.brief.examples:
        examples = [
            texts.ann_example.format(exchange=e.exchange, rating=e.rating, why=e.why)
            for e in job.brief.examples
        ]
        parts.append("\n\n".join([texts.ann_examples_heading, *examples]))
    seen_once = job.seen_once_in_order
    parts.append(texts.ann_commands_seen_once if seen_once else texts.ann_commands_back)
    return parts


def menu(job: AnnotationJob, texts: Texts) -> tuple[tuple[str, str], ...]:
    """The annotator's commands for Telegram's menu: /back only where the job allows it."""
    commands = [
        ("help", texts.command_help),
        ("pause", texts.command_pause),
        ("brief", texts.command_brief),
    ]
    if not job.seen_once_in_order:
        commands.append(("back", texts.command_back))
    commands.append(("withdraw", texts.ann_command_withdraw))
    return tuple(commands)


def where(job: AnnotationJob, texts: Texts, task: AnnotationTask | None, paused: bool) -> str:
    """``/help``: the job, where the annotator stands in it, and what they can do."""
    if task is None:
        said = texts.ann_help_idle.format(title=job.title)
    else:
        wording = texts.ann_help_paused if paused else texts.ann_help_rating
        said = wording.format(title=job.title, progress=progress(task, texts))
    commands = texts.ann_commands_seen_once if job.seen_once_in_order else texts.ann_commands_back
    return f"{said}\n\n{commands}"


def unit_of(task: AnnotationTask) -> str:
    """The conversation a target belongs to (an outside target, or a pair, is its own)."""
    if task.target.level is AnnotationLevel.PAIR:
        return task.target.target
    return task.target.session_id or task.target.target


def progress(task: AnnotationTask, texts: Texts) -> str:
    """ "Exchange 12 of 27 · conversation 3 of 25" (the whole conversation for an overall
    rating; "Pair 2 of 5" for a pair)."""
    if task.target.level is AnnotationLevel.PAIR:
        return texts.ann_progress_pair.format(
            pair=task.conversation_number, pairs=task.conversations
        )
    if task.target.level is AnnotationLevel.EXCHANGE and task.exchange_number:
        return texts.ann_progress_exchange.format(
            exchange=task.exchange_number,
            exchanges=task.exchanges,
            conversation=task.conversation_number,
            conversations=task.conversations,
        )
    return texts.ann_progress_session.format(
        conversation=task.conversation_number, conversations=task.conversations
    )


def conversation(
    task: AnnotationTask, shown: tuple[str, int] | None, texts: Texts, *, with_next: bool = False
) -> tuple[str, tuple[str, int] | None]:
    """The part of the conversation the chat does not show yet (all of it up to the rated
    exchange when the chat moved on from another conversation), and what is shown after.
    ``with_next``: the participant's next message closes it (HRI CUES's exchange), and is
    then not repeated as the next exchange's first line."""
    unit = unit_of(task)
    exchanges: Sequence[TranscriptExchange] = task.conversation
    seen = shown[1] if shown is not None and shown[0] == unit else None
    new = [x for x in exchanges if seen is None or x.turn > seen]
    if not new:
        return "", shown
    numbers = {"conversation": task.conversation_number, "conversations": task.conversations}
    heading = texts.ann_conversation_heading if seen is None else texts.ann_conversation_more
    lines = [heading.format(**numbers)]
    for index, x in enumerate(new):
        reply = x.system_text if x.system_text is not None else texts.ann_no_reply
        lines.append("")
        if not (with_next and seen is not None and index == 0):
            lines.append(f"{texts.ann_user}: {x.user_text}")
        lines.append(f"{texts.ann_system}: {reply}")
    if with_next and task.next_message is not None:
        lines.append(f"{texts.ann_user}: {task.next_message}")
    return "\n".join(lines), (unit, max(x.turn for x in new))


def pair(job: AnnotationJob, task: AnnotationTask, texts: Texts) -> list[str]:
    """A pair's two conversations, one message each, whole: the judged speaker's lines as
    "Speaker 1" (first conversation) or "Speaker 2", the other's as the partner. Nothing of
    which system spoke is shown."""
    parts = []
    numbers = {"pair": task.conversation_number, "pairs": task.conversations}
    for side, exchanges in enumerate(pair_conversations(job, task), start=1):
        speaker = texts.ann_speaker.format(side=side)
        partner = texts.ann_partner
        user, system = (partner, speaker) if job.pairing.speaker == "system" else (speaker, partner)
        lines = [texts.ann_pair_conversation.format(side=side, **numbers)]
        for x in exchanges:
            reply = x.system_text if x.system_text is not None else texts.ann_no_reply
            lines += ["", f"{user}: {x.user_text}", f"{system}: {reply}"]
        parts.append("\n".join(lines))
    return parts
