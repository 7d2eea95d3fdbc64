"""The annotators' flow: an annotator rates stored conversations in Telegram, one target
(an exchange, or a whole conversation) at a time, with the job's instruments.

Pure like the participants' flow: ``flow.step(bundle, state, event, now)`` returns the new
state and the effects; the runner (``bot/runtime/annotators.py``) reads the store (the next
target, a claimed code) into events and carries the effects out. Annotators are not
participants: they have no journey, and their state is rebuilt from the store (the target
in front of them and the items they answered) whenever the bot restarts.
"""
