"""``ozlab web``: the experimenters' web page, the desk's other face (``bot.desk``).

Served by aiohttp in a process of its own, which meets the bot only in the study store, as
the console does: it reads the read model the bot keeps and appends the same command rows,
with the same checks, under the signed-in experimenter's name. Importing this package
imports nothing of aiohttp: ``lab_web.app`` does.
"""
