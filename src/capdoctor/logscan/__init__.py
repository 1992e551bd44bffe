"""The streaming log scanner: finds every signature of the table in client logs, fast and in bounded memory.

Modules, in the order a scan uses them: `sources` (inputs, decompression, skip reasons), `prefilter` (the one
multi-pattern engine over the classifier's literals, typed by its `Prefilter` protocol), `records` (where a
record starts and ends), `memo` (what a record's words say, remembered by its key), `facts` (judging one record:
matches, provider, status, retry, model), `recovery` (did a request complete after an error), `filescan` (one
input's chunks → records → statistics), `results` (options in, `ScanResult` out, merged in file order),
`parallel` (big files in byte ranges over worker processes), `scanner` (the entry points `scan`, `scan_bytes`),
then `timestamps`, `patterns` (hour/day/model/burst/retry analysis), `findings` (statistics → findings, verdict
and the `capdoctor/logs-v1` JSON), `unplaced` and `client_logs` (where each client keeps its logs). The command
glue (`capdoctor logs`, shared with the `logs` check) is `command`, `capdoctor explain` is `explain`; rendering
is `capdoctor.render.logs`. Nothing here is imported by the CLI at start-up;
heavy modules (hyperscan, zstandard) are imported inside functions.
"""
