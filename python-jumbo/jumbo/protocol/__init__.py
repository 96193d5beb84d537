"""The pScheduler plugin protocol: the only layer that reads a method's stdin and argv.

method.py holds the JSON-in/JSON-out helpers every method uses, terminate.py the early
SIGTERM guard of `run`; one module per plugin (pmtu, jumbo_throughput, jumbocheck, archiver)
holds the functions its method executables call, text in and answer out, over the domain
modules. Kept free of imports so that `terminate` loads before anything else."""
