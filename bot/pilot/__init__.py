"""Every role tried before going live: the local Bot API emulator, simulated participants,
`ozlab demo`, `ozlab pilot` and `ozlab chat`, all running the real bot."""
