"""The names the cluster's client (cluster.py) and its workers (cluster_worker.py) agree on,
in a module of their own so neither imports the other for them (and none imports Dask)."""

PLUGIN_NAME = "gemmscope-runner"  # the workers' RunnerPlugin, as the client registers it
STARTED_TOPIC = "gemmscope-run-started"  # the workers' event: a task's run began
