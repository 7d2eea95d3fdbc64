"""Bringing participants in and paying them: invitation codes and the payments file."""
