"""Participants' rights over their data: erasure (GDPR art. 17), by the bot on /withdraw,
by the operator's command, after the study's retention, and in backups."""
