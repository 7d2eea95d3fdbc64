"""The `ozlab run` process: the composition root, the participants' runner, the heartbeat
and logging."""
