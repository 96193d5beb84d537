"""The `jumbocheck` tool: the run and its phases with their duration budget (runner.py), the
reverse path's reflector (reflector.py), the paired iperf3 legs (throughput.py) and the result
assembled on the source and merged with the dest's view (result.py). The probe engine it
drives is jumbo.probe."""
