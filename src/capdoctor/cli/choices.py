"""Choice lists for command-line options whose values load only when they are needed.

Contract: `LazyChoice` is a click parameter type (typer's `click_type`) for `--provider` and `--scenario`:
help shows the values, shell completion offers them, and a value outside the list is a usage error naming
the known ones, exactly like click's `Choice`. The values come from the one table that declares them (the
provider catalogue, the simulator's scenarios), imported on first use rather than at start-up: the CLI must
start as fast as `import typer`, and neither table is needed for `--version` or `checks`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

try:  # typer >= 0.26 vendors click; older releases depend on it
    from typer._click.types import ParamType
except ImportError:  # pragma: no cover - depends on the installed typer
    from click.types import ParamType  # type: ignore[no-redef,import-not-found,assignment,unused-ignore]


class LazyChoice(ParamType):
    """A choice among `load()`'s values; `alias(value)` may map other spellings to one of them."""

    def __init__(
        self, name: str, load: Callable[[], Sequence[str]], alias: Callable[[str], str | None] | None = None
    ) -> None:
        self.name = name
        self._load = load
        self._alias = alias
        self._values: tuple[str, ...] | None = None

    @property
    def values(self) -> tuple[str, ...]:
        """The accepted values, loaded on first use."""
        if self._values is None:
            self._values = tuple(self._load())
        return self._values

    def get_metavar(self, param: Any, ctx: Any = None) -> str:
        """`[a | b | c]`, as click shows a choice in help (spaced, so a long list wraps between names)."""
        return "[" + " | ".join(self.values) + "]"

    def convert(self, value: Any, param: Any, ctx: Any) -> str:
        """`value` when it is one of the values (or an alias of one), else a usage error naming them."""
        text = str(value)
        if text in self.values:
            return text
        aliased = self._alias(text) if self._alias else None
        if aliased in self.values:
            return str(aliased)
        self.fail(f"{text!r} is not one of {', '.join(self.values)}", param, ctx)

    def shell_complete(self, ctx: Any, param: Any, incomplete: str) -> list[Any]:
        """The values that start with what was typed."""
        try:
            from typer._click.shell_completion import CompletionItem
        except ImportError:  # pragma: no cover - depends on the installed typer
            from click.shell_completion import CompletionItem  # type: ignore[no-redef,import-not-found,assignment,unused-ignore]
        return [CompletionItem(v) for v in self.values if v.startswith(incomplete)]


def providers() -> LazyChoice:
    """`--provider`: the catalogue's names; the other spellings users type (claude, ollama…) are accepted."""

    def load() -> Sequence[str]:
        from capdoctor.providers.catalog import PROVIDER_NAMES

        return PROVIDER_NAMES

    def alias(name: str) -> str | None:
        from capdoctor.providers.catalog import canonical

        return canonical(name)

    return LazyChoice("provider", load, alias)


def scenarios() -> LazyChoice:
    """`--scenario`: the simulator's scenario names."""

    def load() -> Sequence[str]:
        from capdoctor.simulator.scenarios import SCENARIOS

        return tuple(SCENARIOS)

    return LazyChoice("scenario", load)
