"""Annotators rate stored exchanges and conversations: jobs, who rates what and when, their
invitations, and the runner that brings their targets to them."""
