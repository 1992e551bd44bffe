"""The one policy for Rich consoles: wrap on a terminal, never in a pipe; colour as the user asked.

Contract: `console_for(stream)` is how every human view gets its console. On a terminal (the stream is a
TTY) Rich wraps to the window and renderers keep hanging indents. Anywhere else (a pipe, a file, a test's
StringIO) nothing is hard-wrapped: one logical line stays one line, as gh and uv do, so `| grep` and
copy-paste see whole lines whatever `COLUMNS` says. Colour follows NO_COLOR (no colours; bold stays, as that
convention asks) and FORCE_COLOR, which Rich reads; `--no-color` asks for plain text: no escape sequences.
`ascii_only` tells whether the stream can show capdoctor's Unicode glyphs. A closed pipe is not an error
(see `console_for`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from capdoctor.cli.streams import is_utf

if TYPE_CHECKING:
    from rich.console import Console

PIPE_WIDTH = 4096
"""Width of a console that is not a terminal: wide enough that a table row never folds. Text is not wrapped
at all there (`soft_wrap`); only tables are laid out to this width."""


def is_tty(stream: Any) -> bool:
    """True when `stream` is an interactive terminal."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def ascii_only(stream: Any) -> bool:
    """True when `stream` cannot encode capdoctor's glyphs (✓ █ —), so renderers pick their ASCII set."""
    return not is_utf(stream)


def console_for(stream: Any, no_color: bool = False) -> Console:
    """A Rich console on `stream` following the module's policy.

    A closed pipe (`capdoctor explain … | head -1`) raises `BrokenPipeError` out of it, for the CLI to end
    quietly: Rich's own answer is `SystemExit(1)`, which is capdoctor's documented "internal error".
    """
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True  # nothing more can be said on this stream
            raise BrokenPipeError

    tty = is_tty(stream)
    return _Console(
        file=stream,
        highlight=False,
        width=None if tty else PIPE_WIDTH,
        soft_wrap=not tty,
        color_system=None if no_color else "auto",
    )  # --no-color: no escape sequences at all
