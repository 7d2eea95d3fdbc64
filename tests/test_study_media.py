"""What a study file says about voice notes and pictures, and its mistakes told at their line:
a task's media, the speech engines, keeping recordings and the consent sentence it needs."""

from __future__ import annotations

from pathlib import Path

from bot.check.study import summary
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.flow import step
from scenarios.loading import load_study
from scenarios.media import (
    EspeakTextToSpeech,
    OpenAISpeechToText,
    PocketSphinxSpeechToText,
    TaskMedia,
)
from tests.test_loading import QUESTIONNAIRE, STUDY, line_of, only_problem, problems_of, write

SPOKEN = """\
id: spoken
title: Spoken
brief: Ask by voice.
media:
  participant_sends: [voice, photo]
  system_returns: [voice, photo]
  system_receives: both
  show_transcript: true
  text_beside: true
  largest_file_mb: 5
"""

ENGINES = """\
speech:
  speech_to_text:
    engine: openai
    url: http://127.0.0.1:9000/
    model: whisper-1
    language: en
  text_to_speech:
    engine: espeak-ng
    voice: en+f3
"""


def study_with(tmp_path: Path, scenario: str, speech: str = ENGINES) -> tuple[Path, str]:
    text = STUDY.replace("[hmd-gift]", "[spoken]") + speech
    write(tmp_path, "scenarios/spoken.yaml", scenario)
    write(tmp_path, "questionnaires/rating.yaml", QUESTIONNAIRE)
    return write(tmp_path, "study.yaml", text), text


def test_a_task_with_voice_and_photos_and_its_engines_load(tmp_path: Path) -> None:
    study, _ = study_with(tmp_path, SPOKEN)
    bundle = load_study(study)
    media = bundle.scenario("spoken").media
    assert media.participant_sends == ("voice", "photo") and media.largest_file_mb == 5
    assert media.transcribes and media.speaks and media.show_transcript and media.text_beside
    speech = bundle.study.speech
    assert isinstance(speech.speech_to_text, OpenAISpeechToText)
    assert speech.speech_to_text.url == "http://127.0.0.1:9000"
    assert isinstance(speech.text_to_speech, EspeakTextToSpeech)
    assert speech.text_to_speech.voice == "en+f3" and speech.keep_audio is False


def test_by_default_a_task_is_text_only() -> None:
    media = TaskMedia()
    assert media.participant_sends == () and media.system_receives == "transcript"
    assert not media.transcribes and not media.speaks and media.largest_file_mb == 20


def test_a_voice_note_sent_as_audio_needs_no_transcriber(tmp_path: Path) -> None:
    scenario = "id: spoken\ntitle: S\nbrief: B.\nmedia:\n  participant_sends: [voice]\n"
    study, _ = study_with(tmp_path, scenario + "  system_receives: media\n", speech="")
    assert load_study(study).scenario("spoken").media.transcribes is False
    pocketsphinx = "speech:\n  speech_to_text:\n    engine: pocketsphinx\n"
    study, _ = study_with(tmp_path, scenario, speech=pocketsphinx)
    engine = load_study(study).study.speech.speech_to_text
    assert isinstance(engine, PocketSphinxSpeechToText) and engine.language == "en"


def test_a_task_that_transcribes_needs_the_studys_engine(tmp_path: Path) -> None:
    study, _ = study_with(tmp_path, SPOKEN, speech="")
    problems = problems_of(study)
    scenario = tmp_path / "scenarios" / "spoken.yaml"
    assert [(p.file, p.line, p.field) for p in problems] == [
        (scenario, line_of(SPOKEN, "participant_sends"), "media.participant_sends"),
        (scenario, line_of(SPOKEN, "system_returns"), "media.system_returns"),
    ]
    assert "no speech.speech_to_text" in problems[0].message
    assert "no speech.text_to_speech" in problems[1].message


def test_contradictions_in_a_tasks_media_are_told_at_their_line(tmp_path: Path) -> None:
    scenario = SPOKEN.replace("system_receives: both", "system_receives: transcript")
    problem = only_problem(study_with(tmp_path, scenario)[0])
    assert (problem.line, problem.field) == (
        line_of(scenario, "system_receives"),
        "media.system_receives",
    )
    assert "a photo has no transcript" in problem.message
    scenario = SPOKEN.replace("system_returns: [voice, photo]", "system_returns: [photo]")
    problem = only_problem(study_with(tmp_path, scenario)[0])
    assert problem.field == "media.text_beside" and "no voice note" in problem.message
    scenario = SPOKEN.replace("largest_file_mb: 5", "largest_file_mb: 21")
    problem = only_problem(study_with(tmp_path, scenario)[0])
    assert problem.field == "media.largest_file_mb" and "20" in problem.message
    scenario = SPOKEN.replace(
        "[voice, photo]\n  system_returns", "[voice, voice]\n  system_returns"
    )
    problem = only_problem(study_with(tmp_path, scenario)[0])
    assert problem.field == "media.participant_sends" and "twice" in problem.message
    scenario = SPOKEN.replace("media:", "kind: side_by_side\nmedia:")
    study, _ = study_with(tmp_path, scenario)
    assert any(
        p.field == "media" and "only a dialogue task" in p.message for p in problems_of(study)
    )


def test_simulated_participants_speak_only_where_the_task_takes_voice_notes(
    tmp_path: Path,
) -> None:
    typed = "id: spoken\ntitle: Spoken\nbrief: Ask.\nsimulation:\n  say: [hi]\n  voice_rate: 0.5\n"
    problem = only_problem(study_with(tmp_path, typed)[0])
    assert (problem.line, problem.field) == (line_of(typed, "voice_rate"), "simulation.voice_rate")
    assert "the task takes no voice notes" in problem.message
    spoken = SPOKEN + "simulation:\n  say: [hi]\n  voice_rate: 0.5\n"
    assert load_study(study_with(tmp_path, spoken)[0]).scenarios["spoken"].simulation is not None


def test_a_task_read_aloud_holds_its_reference_transcripts(tmp_path: Path) -> None:
    read = "id: spoken\ntitle: S\nbrief: B.\nmedia:\n  participant_sends: [voice]\n"
    sentences = "  reference_transcripts:\n    - I want a gift for my sister.\n    - Under fifty.\n"
    study, _ = study_with(tmp_path, read + sentences)
    media = load_study(study).scenario("spoken").media
    assert media.reference_transcripts == ("I want a gift for my sister.", "Under fifty.")
    audio_only = read + "  system_receives: media\n" + sentences
    problem = only_problem(study_with(tmp_path, audio_only)[0])
    assert problem.field == "media.reference_transcripts"
    assert "transcribes no voice notes" in problem.message
    problem = only_problem(study_with(tmp_path, read + sentences + "    - '?!'\n")[0])
    assert problem.field == "media.reference_transcripts[2]" and "without words" in problem.message
    assert problem.line == line_of(read + sentences + "    - '?!'\n", "- '?!'")


def test_keeping_recordings_needs_the_consent_sentence(tmp_path: Path) -> None:
    study, text = study_with(tmp_path, SPOKEN, speech=ENGINES + "  keep_audio: true\n")
    problem = only_problem(study)
    assert (problem.line, problem.field) == (line_of(text, "keep_audio"), "speech.keep_audio")
    assert "texts.audio_kept_note" in problem.message
    note = "We keep your voice notes as recordings for six months, to check the transcripts."
    with_note = text.replace(
        "  declined: Goodbye\n", f"  declined: Goodbye\n  audio_kept_note: {note}\n"
    )
    write(tmp_path, "study.yaml", with_note)
    bundle = load_study(study)
    assert bundle.study.speech.keep_audio
    # ozlab adds the sentence to the consent text, above the closing question
    effects = step(bundle, "P-1", None, ev.StartCommand(), 0.0).effects
    consent = [e for e in effects if isinstance(e, fx.Send)][-1].text
    assert note in consent and consent.endswith("Do you agree?")
    assert consent.index(note) < consent.index("Do you agree?")


def test_the_check_summary_tells_what_a_task_takes_and_keeps(tmp_path: Path) -> None:
    study, _ = study_with(tmp_path, SPOKEN)
    [line] = [s for s in summary(load_study(study)).splitlines() if "scenario spoken" in s]
    assert line.endswith(
        "takes voice and photo (the system gets the file and its words), audio discarded,"
        " systems return voice and photo"
    )
