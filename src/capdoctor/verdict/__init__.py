"""The verdict: one pure function from check results to the primary cause, what else is present, how sure, and
what to do. `decision.decide` is the entry point; `weighing` holds the rule table, `advice` what is said and
advised for each cause and fact, `calibration` what a confidence means. Nothing here does I/O."""
