"""The key, described without its value: its variable, whether it is set, where its name came from, its shape.

Contract: `describe_key(target, env)` is pure. It names the variable the target reads the key from, whether it
is set, empty or only whitespace, where that name came from, and the key's shape: its length and the provider
family of its prefix (a prefix such as `sk-ant-` is public; no other character is ever kept). `KeyFacts.problem`
names what is wrong before any request: `unset`, `empty`, `whitespace`, `template` (a URL or an unexpanded
`${…}`), `foreign` (another provider's key at this provider's host) or None; the models rules decide what it
means for the verdict. It must not read os.environ, print, or return any part of the key beyond that prefix.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from capdoctor.run.context import Target

TEMPLATE_MARKERS = ("${", "$(", "{{")
"""What an unexpanded shell or config template leaves in a value."""


@dataclass(frozen=True)
class KeyFacts:
    """What capdoctor knows about the target's key, never its value.

    `variable` is the variable the key is read from (None when nothing named one and none is set); `state` is
    `set`, `unset`, `empty` or `whitespace`; `family`/`prefix` the provider whose key prefix it starts with.
    """

    provider: str
    variable: str | None
    candidates: tuple[str, ...]
    name_source: str
    key_source: str | None
    state: str
    length: int | None
    family: str | None
    prefix: str | None
    expected_prefixes: tuple[str, ...]
    problem: str | None
    explicit: bool
    """True when the variable was named (flag, capdoctor.toml, a client's config), not guessed."""

    @property
    def present(self) -> bool:
        """True when a key will be sent."""
        return self.state == "set"

    def names(self) -> str:
        """The variable(s) to talk about: the named one, else the provider's own."""
        return self.variable or " or ".join(self.candidates) or "(no key variable)"

    def to_dict(self) -> dict[str, Any]:
        """JSON shape for report data and `capdoctor config` (no value: there is none to leak)."""
        out = asdict(self)
        out["candidates"] = list(self.candidates)
        out["expected_prefixes"] = list(self.expected_prefixes)
        return out


def describe_key(target: Target, env: Mapping[str, str]) -> KeyFacts:
    """The facts about `target`'s key (see the module docstring); pure."""
    from capdoctor.providers.catalog import adapter_for, is_official, key_family

    adapter = adapter_for(target.provider)
    sources = dict(target.sources or {})
    explicit = "api_key_env" in sources
    variable = target.api_key_env
    if explicit:
        name_source = sources["api_key_env"]
    elif variable:
        name_source = f"the {adapter.name} default ({', '.join(adapter.key_envs) or variable})"
    else:
        name_source = f"none set among the {adapter.name} defaults ({', '.join(adapter.key_envs) or 'none'})"
    raw = target.api_key
    if raw is None and not variable:  # a provider variable that exists but is empty counts as that variable
        variable = next((v for v in adapter.key_envs if v in env), None)
    if raw is None and variable and variable in env:
        raw = env[variable]  # set but empty: discovery treats it as absent, here it is worth saying
    if raw is None:
        state = "unset"
    elif raw == "":
        state = "empty"
    elif not raw.strip():
        state = "whitespace"
    else:
        state = "set"
    family = key_family(raw.strip()) if raw else None
    problem: str | None = None if state == "set" else state
    if state == "set" and raw is not None:
        if raw != raw.strip():
            problem = "whitespace"
        elif raw.startswith(("http://", "https://")) or any(m in raw for m in TEMPLATE_MARKERS):
            problem = "template"
        elif (
            family is not None
            and family[0] != adapter.name
            and adapter.key_prefixes
            and is_official(adapter, target.base_url)
        ):
            problem = "foreign"  # its longest known prefix is another provider's, at this provider's own host
    return KeyFacts(
        provider=adapter.name,
        variable=variable,
        candidates=adapter.key_envs,
        name_source=name_source,
        key_source=sources.get("key"),
        state=state,
        length=len(raw) if raw else (0 if raw == "" else None),
        family=family[0] if family else None,
        prefix=family[1] if family else None,
        expected_prefixes=adapter.key_prefixes,
        problem=problem,
        explicit=explicit,
    )


def problem_text(facts: KeyFacts) -> str:
    """One sentence on what is wrong with the key, naming the variable and where its name came from."""
    var = facts.names()
    where = f" (named by {facts.name_source})" if facts.explicit else ""
    if facts.problem == "unset" and facts.variable:
        return f"The key variable {var}{where} is not set: requests go out without a key."
    if facts.problem == "unset":
        return f"No key: {var} is not set ({facts.provider} reads its key from there), so requests go out without one."
    if facts.problem == "empty":
        return f"The key variable {var}{where} is set but empty: requests go out without a key."
    if facts.problem == "whitespace":
        return (
            f"The key in {var}{where} has leading or trailing whitespace (a pasted newline?): the provider "
            "compares it byte for byte and refuses it."
        )
    if facts.problem == "template":
        return f"The value of {var}{where} looks like a URL or an unexpanded template, not a key."
    if facts.problem == "foreign":
        expected = ", ".join(f"{p}…" for p in facts.expected_prefixes)
        return (
            f"The key in {var}{where} has the shape of a {facts.family} key ({facts.prefix}…, {facts.length} "
            f"characters), not a {facts.provider} key ({expected}): the wrong key is in this variable."
        )
    return f"The key in {var} is set ({facts.length} characters)."


def problem_word(facts: KeyFacts) -> str:
    """The problem in a few words, for one-line summaries: `not set`, `empty`, `anthropic's, not openai's`…"""
    words = {
        "unset": "not set",
        "empty": "empty",
        "whitespace": "padded with whitespace",
        "template": "a URL or template, not a key",
        "foreign": f"{facts.family}'s, not {facts.provider}'s",
    }
    return words.get(facts.problem or "", "set")


def shape_text(facts: KeyFacts) -> str:
    """The key's shape in words: `51 characters, openai prefix sk-proj-`, or why there is none."""
    if not facts.present:
        return facts.state
    fam = f", {facts.family} prefix {facts.prefix}" if facts.family else ", no known prefix"
    return f"{facts.length} characters{fam}"
