"""The streaming log scanner: finds every signature of the table in client logs, fast and in bounded memory.

The entry points are `scanner.scan` and `scan_bytes`; `filescan` reads one input's chunks into records and
statistics, `parallel` splits big files over worker processes, `findings` turns statistics into findings, the
verdict and the `capdoctor/logs-v1` JSON. `command` is `capdoctor logs` (shared with the `logs` check),
`explain` is `capdoctor explain`. Nothing here is imported by the CLI at start-up; heavy modules (hyperscan,
zstandard) are imported inside functions.
"""
