"""``ozlab new FOLDER``: a commented starter study that loads as written.

A researcher's first study is usually a copy of an example: this one shows every part of the
format (systems of each type, designs, timing, screening, exchange-level ratings, skip logic,
reverse-coded items, translations) with comments, and passes ``ozlab check`` unchanged, so
that each edit can be checked against a study known to be sound.
"""

from __future__ import annotations

import re
from pathlib import Path

from bot.core.errors import StudyDataError

__all__ = ["STARTER_FILES", "write_starter"]

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")

_STUDY = """\
# A starter study written by "ozlab new". Check it after every edit:
#
#   ozlab check {folder}/study.yaml
#
# Its language model (my-llm, below) needs its server running: "ozlab serve-demo --openai"
# in another terminal serves the demo one; then "ozlab demo --study {folder}/study.yaml".
#
# Where names are looked up:
#   scenarios:       scenarios/<id>.yaml beside this file, then the scenarios shipped with ozlab
#   questionnaires:  questionnaires/<id>.yaml beside this file, then the shipped instruments
#                    (hmd, idial, xrec-exchange, hri-cues, e2e-nlg, ...)
# Durations are seconds (90) or a number with a unit: 90s, 10m, 1.5h, 1d.
#
# For completion and documentation in your editor (VS Code's YAML extension and others), run
# "ozlab schema --out {folder}/schemas" and make this the first line of the file:
#   # yaml-language-server: $schema=schemas/study.schema.json
# (scenario and questionnaire files use ../schemas/scenario.schema.json and
# ../schemas/questionnaire.schema.json).

# A short, stable name, stored with every session: do not change it once the study runs.
id: {study_id}
title: My study

# Everything the bot says outside scenarios and questionnaires. welcome, consent and declined
# are required; the other sentences (buttons, reminders, thanks, ...) have defaults that you
# may replace here: each is listed with its default in the study file reference, section
# Texts (docs/reference/study-file.md#texts in ozlab's guides). Plain text, no Markdown.
texts:
  welcome: |-
    Hello, and thank you for helping us evaluate a shopping assistant!
    You will chat with the assistant to complete a short task, and then rate the conversation.
  # ">-" joins lines with spaces, so that long sentences can be wrapped here; an empty line
  # starts a new line. ("|-" keeps every line break as written.)
  consent: >-
    Your messages and answers will be used for research only. Your Telegram name and
    username are not stored: your answers are linked only to a pseudonymous code.

    Do you agree to take part?
  declined: No problem, thank you for your time. Send /start if you change your mind.
  # thanks: Thank you for taking part!

# Participants with an invitation code start the bot with "/start CODE". Without codes (the
# default), anyone who finds the bot may take part.
# invite_codes: [spring-class, pilot]

# The systems under test. Each id must be unique: it is stored with every exchange and
# names the system in the report. Here the built-in demo shop assistant, in two variants,
# and a language model.
systems:
  - type: demo
    id: shop-v1
    variant: v1
  - type: demo
    id: shop-v0
    variant: v0
  # A language model behind an OpenAI-compatible chat server (OpenAI, vLLM, llama.cpp,
  # Ollama, ...). It is offered the scenario's tools (see tools in scenarios/my-task.yaml),
  # and its calls decide the task's success. As written, it is the demo shop playing such a
  # model on this computer: start it with "ozlab serve-demo --openai" in another terminal
  # before "ozlab demo" or "ozlab run". url_env names an environment variable that, when
  # set, says where the server is instead of url (OZLAB_MODEL_URL=http://gpu-box:8000 ozlab
  # run ...). Keys are never written here: api_key_env names the variable that holds the
  # key. "ozlab check --ping" asks the server once.
  - type: openai
    id: my-llm
    url: http://127.0.0.1:8081
    url_env: OZLAB_MODEL_URL
    model: ozlab-demo-shop-v1
    # api_key_env: OPENAI_API_KEY
    system_prompt: "You are a helpful shop assistant. The user's task: {{brief}}"
    temperature: 0.7
  # A Rasa assistant through its REST channel.
  # - type: rasa
  #   id: my-rasa
  #   url: http://localhost:5005
  # Any JSON service: say where ozlab puts each part of the request (dotted paths) and
  # where it finds the reply in the answer.
  # - type: http
  #   id: my-service
  #   url: https://example.org/chat
  #   request: {{session_id: session_id, input.text: message}}
  #   response: {{text: reply.text}}
  # Your own Python class (package.module:ClassName), built with the options given.
  # - type: python
  #   id: my-adapter
  #   entry: my_package.adapter:MyAdapter
  #   options: {{temperature: 0.5}}
  # Every system also takes timeout (default 30s), retries (2) and format (plain, markdown
  # or html: how its replies are shown).

# The tasks, by id (see the lookup rules at the top).
scenarios: [my-task]

# Questionnaires before the study. Their eligible_if decides who takes part: a participant
# who does not qualify is thanked and released. Only screening questionnaires may have one.
screening: [my-screening]

# Questionnaires asked once, at the end of the study (each scenario names its own).
post_study: []

# How participants get scenarios and systems; every assignment is stored with its seed.
#   type:    random        drawn per participant from a generator seeded with seed
#            balanced      the (scenario, system) cells fill evenly as participants arrive,
#                          also when some drop out (block randomization)
#            latin_square  the order of systems (systems: within) or of scenarios follows
#                          the rows of a balanced Latin square
#   systems: between       one system for all of a participant's tasks
#            within        each task with another system
#   tasks_per_participant  how many scenarios each participant plays (default: all of them)
#   order:   fixed         scenarios in the order listed above
#            random        in a new order for each participant
design:
  type: balanced
  seed: 1
  systems: between
  # tasks_per_participant: 3
  # order: random

# A reminder after 10 minutes of silence; after an hour the session counts as abandoned
# (close_abandoned: true also closes it and tells the participant).
timing:
  reminder_after: 10m
  abandon_after: 1h
  close_abandoned: false

# The language of the texts above. Participants whose Telegram is set to a language listed
# under translations read those sentences instead; any sentence not translated stays as
# above. Scenarios have translations of their own.
language: en
translations:
  it:
    welcome: |-
      Ciao, e grazie per aiutarci a valutare un assistente per gli acquisti!
      Chatterai con l'assistente per completare un breve compito, e poi valuterai la conversazione.
    consent: >-
      I tuoi messaggi e le tue risposte saranno usati solo per la ricerca. Il tuo nome e il
      tuo username di Telegram non vengono salvati: le tue risposte sono legate solo a un
      codice pseudonimo.

      Accetti di partecipare?
    declined: Nessun problema, grazie per il tuo tempo. Invia /start se cambi idea.
    consent_accept: Accetto
    consent_decline: Non accetto
"""

_SCENARIO = """\
# A task: what the participant reads, how long the chat may last, what is asked during and
# after it. The id must equal the file name (my-task.yaml) and is stored with every session.
id: my-task
title: A game for Alex

# What the participant reads before chatting, written to them.
brief: >-
  Your friend Alex likes adventure games and owns a Linux machine. Find an adventure game
  for Linux under €20 and add it to your wishlist.

# For the experimenters and the report: what the participant should achieve, and how
# success is decided (a system may report "task_success" itself).
goal: An adventure game for Linux under €20 on the wishlist.
success: A game matching all three constraints is added to the wishlist.
expected_duration: 5m

# When "task_success" counts as done correctly: tests on what the system says it did (the
# demo shop reports the game: title, genres, platforms). The report gives both "the system
# reported success" and "the task was done correctly". Tests: equals, one_of, not_in, contains.
success_if:
  genres: {contains: adventure}
  platforms: {contains: linux}
  # A language model (type: openai) reports nothing itself: it calls the tools below, and
  # tool.argument tests check its calls.
  add_to_wishlist.game:
    one_of: [Moss Hollow, The Clockwork Lighthouse, Lantern Road, Paper Kingdoms,
             Skyward Caravan, Whispering Pines]

# Functions offered to a language model (type: openai systems), in the OpenAI
# function-calling form: name, description, the JSON schema of the arguments. What each
# returns comes from a table beside this file (results: a .csv or .yaml whose first row
# matching the call's arguments answers; an empty cell matches anything) or from a Python
# function beside it (function: my_tools.py:add_to_wishlist). ends_task: a call that gets a
# result ends the task as done. Every call and result is stored with the session.
tools:
  - name: add_to_wishlist
    description: Add a game to the participant's wishlist, once they have chosen it.
    parameters:
      type: object
      properties:
        game: {type: string, description: "The game's exact title"}
      required: [game]
    results: my-wishlist.csv
    ends_task: true

# Limits: at most 10 exchanges (a participant message and the system's answer), and 7
# minutes, checked after each participant message. Leave out either one for no limit.
max_exchanges: 10
time_limit: 7m

# Scripted first and last lines, sent as the system's own messages.
opening_line: Hi! I'm the shop assistant. What are you looking for today?
closing_line: Thank you for chatting with me. Goodbye!

# For LLM systems: replaces the system's own prompt in this scenario.
# system_prompt: "You are a shop assistant. The user's task: {brief}"

# Questionnaires asked after each system reply, beside the chat: the next message still
# goes through, and an unanswered rating is recorded as missing.
exchange: [my-reply-rating]

# Questionnaires asked after the task, in this order.
post_task: [my-questionnaire]

# The scenario's words in other languages (title, brief, opening_line, closing_line).
translations:
  it:
    title: Un gioco per Alex
    brief: >-
      Il tuo amico Alex ama i giochi di avventura e ha un computer Linux. Trova un gioco di
      avventura per Linux sotto i 20 € e aggiungilo alla tua wishlist.

# How simulated participants (ozlab demo, ozlab pilot) play this task; real participants never
# see it. Their lines come first, unless what the system just said matches a reply's words
# (the first that matches wins); {item} and {n} are a title and its number from the last
# numbered list the system sent. Without this block they speak from the brief in general words.
simulation:
  say:
    - I'm looking for an adventure game for Linux under 20 euros
  replies:
    - when: [I found, Here are]
      say: ["Please add {item} to my wishlist.", "I'll take number {n}, add it to my wishlist"]
    - when: [which game would you like to add, did you mean]
      say: ["{item}"]
  otherwise:
    - I need an adventure game that runs on Linux and costs less than 20 euros.

# A rating task instead of a dialogue: the participant rates the rows of a file one by one,
# without a system. Such a scenario has these fields instead of exchange, max_exchanges,
# opening_line, closing_line and system_prompt:
#   kind: rating
#   stimuli: my-sentences.csv      # beside this file: a header row, an optional id column
#                                  # (or .jsonl: one JSON object per line)
#   stimulus_template: "Meaning: {mr}\\nSentence: {utterance}"   # {column} of the file
#   rate_with: [my-sentence-rating]                              # asked for every row
"""

_WISHLIST = """\
game,result
,Added to the participant's wishlist.
"""

_QUESTIONNAIRE = """\
# Asked after the task (see post_task in scenarios/my-task.yaml). Item ids are stable and
# unique in the whole study: answers are stored by id, never by position.
id: my-questionnaire
title: About this conversation
# Said before the first item, after the study's own words for the moment (after a task,
# texts.questionnaire_intro: "Please rate the conversation you just had.").
intro: Tap the answer that fits best; the last question is optional.

# true: the items come in a new order for each participant (the seed is stored); items
# with a condition stay after the item they depend on.
randomize: false

items:
  # A rating scale of any width, with a label for every point. construct groups items
  # into a scale for scores and reliability; help and examples are shown with an
  # "Examples" button.
  - type: scale
    id: my-questionnaire.understood
    text: The assistant understood what I wanted.
    construct: effectiveness
    min: 1
    max: 5
    labels: &agreement
      1: Strongly disagree
      2: Disagree
      3: Neither agree nor disagree
      4: Agree
      5: Strongly agree
    help: Think of the whole conversation, not only its last reply.
    examples:
      - 'You asked for games under €20 and got only such games: "Agree" or "Strongly agree".'

  # reverse: true is scored as min + max - answer in the analysis, and shown as asked.
  - type: scale
    id: my-questionnaire.confusing
    text: The assistant's replies were confusing.
    construct: effectiveness
    labels: *agreement
    reverse: true

  # An attention check: stored and flagged in the analysis, never dropped silently.
  - type: scale
    id: my-questionnaire.attention
    text: To show that you are reading, please choose "Disagree".
    labels: *agreement
    attention: 2

  # Scales may start at 0, and labels may be whole sentences: long labels are shown
  # numbered in the message, with the numbers on the buttons.
  - type: scale
    id: my-questionnaire.again
    text: How often would you use an assistant like this one?
    min: 0
    max: 4
    labels: {0: Never, 1: Rarely, 2: Sometimes, 3: Often, 4: Always}

  - type: yes_no
    id: my-questionnaire.done
    text: Did you complete the task?

  # Skip logic: asked only when an earlier item was answered a certain way
  # (equals: one answer, or any_of: [several]). Yes is stored as 1, no as 0.
  - type: choice
    id: my-questionnaire.why_not
    text: What stopped you?
    when: {item: my-questionnaire.done, equals: 0}
    options:
      - {value: not_found, label: The assistant found no suitable game}
      - {value: misunderstood, label: The assistant misunderstood me}
      - {value: limit, label: I ran out of messages or time}
      - {value: other, label: Something else}

  # Free text: optional unless required: true, at most max_length characters.
  - type: text
    id: my-questionnaire.comment
    text: Anything else you would like to tell us? (optional)
    max_length: 1000

# The questionnaire's words in other languages, items by id: text, help, examples, labels
# (scale points), options (by value), yes and no. What is not translated stays as above;
# ozlab check lists it. Ids, values and scoring never change with the language.
translations:
  it:
    title: Su questa conversazione
    intro: Tocca la risposta più adatta; l'ultima domanda è facoltativa.
    items:
      my-questionnaire.understood:
        text: L'assistente ha capito che cosa volevo.
        labels: &accordo
          1: Per niente d'accordo
          2: In disaccordo
          3: Né d'accordo né in disaccordo
          4: D'accordo
          5: Del tutto d'accordo
        help: Pensa all'intera conversazione, non solo all'ultima risposta.
        examples:
          - >-
            Hai chiesto giochi sotto i 20 € e hai ricevuto solo giochi così: "D'accordo" o
            "Del tutto d'accordo".
      my-questionnaire.confusing:
        text: Le risposte dell'assistente erano confuse.
        labels: *accordo
      my-questionnaire.attention:
        text: Per mostrare che stai leggendo, scegli "In disaccordo".
        labels: *accordo
      my-questionnaire.again:
        text: Quanto spesso useresti un assistente come questo?
        labels: {0: Mai, 1: Raramente, 2: A volte, 3: Spesso, 4: Sempre}
      my-questionnaire.done:
        text: Hai completato il compito?
        "yes": Sì
        "no": "No"
      my-questionnaire.why_not:
        text: Che cosa te lo ha impedito?
        options:
          not_found: L'assistente non ha trovato un gioco adatto
          misunderstood: L'assistente mi ha frainteso
          limit: Ho finito i messaggi o il tempo
          other: Altro
      my-questionnaire.comment:
        text: Vuoi dirci qualcos'altro? (facoltativo)
"""

_SCREENING = """\
# Asked before the study (see screening in study.yaml). Every eligible_if condition must
# hold, or the participant is thanked and released: only screening questionnaires have one.
id: my-screening
title: Before we start
intro: Two questions to check that this study is for you.
items:
  - type: yes_no
    id: my-screening.adult
    text: Are you 18 years old or older?
  - type: choice
    id: my-screening.english
    text: How well do you speak English?
    options:
      - {value: native, label: It is my native language}
      - {value: fluent, label: Fluently}
      - {value: basic, label: A little}
eligible_if:
  - {item: my-screening.adult, equals: 1}
  - {item: my-screening.english, any_of: [native, fluent]}
"""

_REPLY_RATING = """\
# Asked after each system reply (see exchange in scenarios/my-task.yaml), beside the chat.
id: my-reply-rating
title: This reply
items:
  # Thumbs up is stored as 1, thumbs down as 0.
  - type: thumbs
    id: my-reply-rating.good
    text: Was this reply helpful?
  # Multiple choice: options are toggled, then confirmed with "Done".
  - type: multi_choice
    id: my-reply-rating.problems
    text: What went wrong in this reply?
    when: {item: my-reply-rating.good, equals: 0}
    options:
      - {value: off_topic, label: Off-topic}
      - {value: repetitive, label: Repetitive}
      - {value: ungrammatical, label: Ungrammatical}
      - {value: wrong, label: Wrong information}
"""

STARTER_FILES = (
    "study.yaml",
    "scenarios/my-task.yaml",
    "scenarios/my-wishlist.csv",
    "questionnaires/my-questionnaire.yaml",
    "questionnaires/my-screening.yaml",
    "questionnaires/my-reply-rating.yaml",
)
"""The files ``write_starter`` writes, relative to the study folder."""


def write_starter(folder: Path) -> list[Path]:
    """Write the starter study into ``folder`` (created if needed); the paths written.

    Refuses with :class:`~bot.core.errors.StudyDataError`, before writing anything, when one of
    the files exists: a researcher's edits must never be overwritten by a template.
    """
    targets = [folder / name for name in STARTER_FILES]
    existing = [path for path in targets if path.exists()]
    if existing:
        names = ", ".join(str(path) for path in existing)
        raise StudyDataError(f"not overwriting what is already there: {names}")
    study_id = folder.resolve().name
    texts = (
        _STUDY.format(folder=folder, study_id=study_id if _ID.fullmatch(study_id) else "my-study"),
        _SCENARIO,
        _WISHLIST,
        _QUESTIONNAIRE,
        _SCREENING,
        _REPLY_RATING,
    )
    for path, text in zip(targets, texts, strict=True):
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("x", encoding="utf-8") as handle:  # "x": never replace a file
            handle.write(text)
    return targets
