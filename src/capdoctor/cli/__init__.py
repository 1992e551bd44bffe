"""The command line: the Typer app, how each flag is spelled, presentation of a run, exit codes."""
