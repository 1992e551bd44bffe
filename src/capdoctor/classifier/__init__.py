"""The one classification engine: error text (plus status, headers and where it came from) to causes.

Read by the live probes, the hardware check, the log scanner and `capdoctor explain`. Its modules:
`tables` (the rows of every layer, loaded from the TOML files beside it), `structure` (statuses, fields and
names read from the text's shape), `words` (the last layer's token model), `engine` (the compiled engine:
`classify`, the prefilter literals and `classify_candidates`). The stable import path for callers is
`capdoctor.classifier.signatures`.

This `__init__` imports none of its submodules (checks import them lazily from worker threads).
"""
