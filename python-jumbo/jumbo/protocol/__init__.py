"""The pScheduler plugin protocol: the only layer that reads a method's stdin and argv.

method.py holds the JSON-in/JSON-out helpers every method uses (and the methods every test
plugin answers the same way), terminate.py the early SIGTERM guard of `run` (jumbo.core.
terminate); one module per plugin (pmtu, jumbo_throughput, jumbocheck, archiver) holds the
functions its method executables call, text in and answer out, over the domain modules.
probe_cli.py is the `jumbocheck` console command (the probe engine without pScheduler).
Kept free of imports so that `terminate` loads before anything else."""
