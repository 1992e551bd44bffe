"""Which client the user runs: one answer for the next steps, the ticket and `capdoctor fallback --format`.

Contract: `client_in_use(target, client_data)` is pure over the report's `target` dict and the `client` check's
`data`, as plain mappings, so that any caller holding a report can ask. Order of evidence: the client whose
settings the target came from; else the one client for this provider with sessions running; else the one
installed; else the provider's Python SDK when installed; else "unknown" with the reason. `switch_model` says
how that client switches model, so a next step never tells an SDK user to run `codex --model`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from capdoctor.checks.client_config import PROVIDER_CLIENTS

SWITCH_MODEL: dict[str, str] = {
    "codex": "codex --model {model}",
    "claude": "claude --model {model}",
    "gemini": "gemini --model {model}",
    "copilot": "copilot --model {model}",
    "aider": "aider --model {model}",
}
"""How each command-line client starts with another model: a copyable command."""

SDK_SWITCH = 'in your code, pass model="{model}" to the SDK call'
"""How an SDK user switches model: the parameter, not a command."""

PROVIDER_SDK: dict[str, str] = {
    "openai": "openai",
    "openai-compatible": "openai",
    "azure": "openai",
    "openrouter": "openai",
    "anthropic": "anthropic",
    "gemini": "google-genai",
}
"""The Python package a provider's SDK users install (the client check reports their versions)."""

FALLBACK_FORMAT: dict[str, str] = {
    "codex": "codex",
    "claude": "claude-code",
    "sdk:openai": "openai-python",
    "sdk:anthropic": "anthropic-python",
}
"""The `capdoctor fallback --format` each client (or SDK package) loads; any other client gets `litellm`, a proxy
every client can point at."""

SDK_NAMES: dict[str, str] = {
    "openai": "OpenAI Python SDK",
    "anthropic": "Anthropic Python SDK",
    "google-genai": "Google Gen AI SDK",
}

_SWITCH_PATTERNS = {
    cid: re.compile("^" + re.escape(t).replace(re.escape("{model}"), r"(?P<model>\S+)") + "$")
    for cid, t in SWITCH_MODEL.items()
}


@dataclass(frozen=True)
class ClientInUse:
    """The client the user most likely runs: `id` is a client id (`codex`, `claude`…), `sdk` or `unknown`."""

    id: str
    name: str
    version: str | None = None
    basis: str = ""
    package: str | None = None  # the SDK's package, for `sdk`

    def to_dict(self) -> dict[str, Any]:
        """The report's `client` object."""
        return {"id": self.id, "name": self.name, "version": self.version, "basis": self.basis, "package": self.package}

    @property
    def fallback_format(self) -> str:
        """The `capdoctor fallback --format` this client loads (`litellm` when no better one is known)."""
        key = f"sdk:{self.package}" if self.id == "sdk" else self.id
        return FALLBACK_FORMAT.get(key, "litellm")

    def switch_model(self, model: str) -> tuple[str | None, str | None]:
        """(command, hint) that switch this client to `model`; both None when the client is not known."""
        if self.id in SWITCH_MODEL:
            return SWITCH_MODEL[self.id].format(model=model), None
        if self.id == "sdk":
            return None, SDK_SWITCH.format(model=model)
        return None, None


def switched_model(command: str) -> str | None:
    """The model of a client's switch-model command (`codex --model gpt-5.4-mini` → `gpt-5.4-mini`), else None."""
    for pattern in _SWITCH_PATTERNS.values():
        m = pattern.match(command.strip())
        if m:
            return m.group("model")
    return None


def _serves(client_id: str, provider: str) -> bool:
    """True when `client_id` talks to `provider` (a provider without a table entry: every client may)."""
    return client_id in PROVIDER_CLIENTS[provider] if provider in PROVIDER_CLIENTS else True


def client_in_use(target: Mapping[str, Any] | None, client_data: Mapping[str, Any] | None) -> ClientInUse:
    """The client the user runs, from the report's `target` and the client check's `data` (None: not run)."""
    from capdoctor.probes.local_clients import CLIENTS

    names = {spec.id: spec.name for spec in CLIENTS}
    provider = str((target or {}).get("provider") or "")
    data = client_data or {}
    installed = {str(c["id"]): c for c in data.get("clients") or [] if isinstance(c, Mapping) and c.get("id")}

    def known(cid: str, basis: str) -> ClientInUse:
        row = installed.get(cid, {})
        return ClientInUse(cid, str(row.get("name") or names.get(cid, cid)), row.get("version"), basis)

    configured = (target or {}).get("client")
    if configured:
        return known(str(configured), f"the target was read from {names.get(configured, configured)}'s settings")
    sessions = {str(c): int(n) for c, n in (data.get("sessions") or {}).items() if n and _serves(str(c), provider)}
    if len(sessions) == 1:
        ((cid, n),) = sessions.items()
        return known(cid, f"{n} {names.get(cid, cid)} session(s) running")
    serving = [cid for cid in installed if _serves(cid, provider)]
    if len(serving) == 1 and not sessions:
        return known(serving[0], f"the only installed client for {provider}")
    package = PROVIDER_SDK.get(provider)
    sdks = data.get("sdks") or {}
    if package and package in sdks and not serving:
        version = sdks[package].get("version") if isinstance(sdks[package], Mapping) else None
        return ClientInUse(
            "sdk",
            SDK_NAMES.get(package, package),
            version,
            f"the {package} package is installed and no command-line client for {provider}",
            package,
        )
    if sessions or serving:
        several = ", ".join(names.get(c, c) for c in sorted(set(sessions) | set(serving)))
        basis = f"several clients could be in use ({several})"
    elif client_data is None:
        basis = "the client check did not run"
    else:
        basis = "no AI client or SDK for this provider was found"
    return ClientInUse("unknown", "not identified", None, basis)
