"""The ``ozlab run`` process around the pure flows: which flow a chat belongs to
(``dispatch``) and the one loop that steps a flow, commits what it recorded with the update
it consumed, then acts (``driver``)."""
