"""The PostgreSQL backend: a lab's studies on one database server, a schema each.

Imported only when a URL names PostgreSQL (``bot.store.opening``): a SQLite run loads none
of it, nor psycopg.
"""
