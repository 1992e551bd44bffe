"""The streaming log scanner: finds every signature of the table in client logs, fast and in bounded memory.

Modules: `sources` (inputs, decompression, skip reasons), `engine` (the one multi-pattern prefilter),
`timestamps` (time shapes), `scanner` (chunks → records → statistics), `patterns` (hour/day/model/burst/
retry analysis), `findings` (statistics → findings, verdict and the `capdoctor/logs-v1` JSON),
and `discovery` (where each client keeps its logs). The command glue (`capdoctor logs`, shared with the `logs`
check) is `capdoctor.logscan.command`; rendering is `capdoctor.render.logs`. Nothing here is imported
by the CLI at start-up; heavy modules (hyperscan, zstandard) are imported inside functions.
"""
