"""The wizard console: experimenters watch live sessions and step in (Wizard-of-Oz), in a
terminal.

The console is one face of the experimenter's desk (``bot.desk``), which it shares with the
web page; it meets the bot only in the study store. Importing this package does not import
Textual: the bot and the plain commands never pay for it.
"""
