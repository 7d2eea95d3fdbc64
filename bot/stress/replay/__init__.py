"""Replaying stress tests: a logged dialogue prefix sent again to its system in a fresh
conversation, unchanged and with one perturbation, and the verdicts on what came back.
Only the stress tables are written; live sessions are never touched."""
