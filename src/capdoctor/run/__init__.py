"""One diagnosis run: the engine that runs the checks, the staged runner, the context, the budget, the clock."""
