"""Latest released versions from the npm registry and PyPI, cached for a day in the user cache dir.

Contract: `latest_versions(packages, ...)` returns `{key: version-or-None}` for keys such as
`npm:@openai/codex` and `pypi:aider-chat`; None means "latest unknown" (offline, lookups disabled, registry
error, malformed answer) and callers must say so rather than guess. Base URLs are parameters so tests point
them at a loopback server shaped like the registries. A fresh cache entry is used without any request.
Must not raise for network trouble, and must not decide what a version lag means (that is the check).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from capdoctor.run.threads import map_parallel
from capdoctor.target.urls import join

if TYPE_CHECKING:
    import httpx

NPM_REGISTRY = "https://registry.npmjs.org"
PYPI_URL = "https://pypi.org"
CACHE_TTL_S = 24 * 3600
CACHE_FILE = "latest-versions.json"
FETCH_BUDGET_S = 10.0
"""The most the registry look-ups wait, all together (each request has its own, shorter deadline)."""
NPM_ACCEPT = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*"


def npm_url(registry: str, package: str) -> str:
    """The packument URL: scoped names keep `@` but encode the slash (`@openai%2Fcodex`), as npm does."""
    return join(registry, quote(package, safe="@"))


def pypi_json_url(base: str, project: str) -> str:
    """The PyPI JSON API URL of `project` (`/pypi/<project>/json`)."""
    return join(base, f"pypi/{quote(project, safe='')}/json")


def parse_npm_latest(body: Any) -> str | None:
    """`dist-tags.latest` of an npm packument (full or abbreviated), or None when absent or malformed."""
    if isinstance(body, dict):
        tags = body.get("dist-tags")
        if isinstance(tags, dict) and isinstance(tags.get("latest"), str):
            return str(tags["latest"])
    return None


def parse_pypi_latest(body: Any) -> str | None:
    """`info.version` of a PyPI JSON answer, or None when absent or malformed."""
    if isinstance(body, dict):
        info = body.get("info")
        if isinstance(info, dict) and isinstance(info.get("version"), str):
            return str(info["version"])
    return None


def _read_cache(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_cache(path: Path, data: Mapping[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass  # a read-only cache dir only costs a lookup next time


def latest_versions(
    keys: Iterable[str],
    *,
    npm_registry: str,
    pypi_url: str,
    cache_dir: Path,
    allow_network: bool,
    client_factory: Callable[[], httpx.Client] | None,
    now: float | None = None,
) -> dict[str, str | None]:
    """Latest version per key (`npm:<package>` or `pypi:<project>`), from a fresh cache or the registries.

    Why a cache: the check runs on every diagnosis, and registry answers change at most a few times a day;
    the cache key includes the registry base, so a test registry never pollutes the real entries.
    """
    wanted = sorted(set(keys))
    stamp = time.time() if now is None else now
    cache_path = cache_dir / CACHE_FILE
    cache = _read_cache(cache_path)
    out: dict[str, str | None] = {}
    to_fetch: list[tuple[str, str, str]] = []  # (key, cache key, url)
    for key in wanted:
        kind, _, name = key.partition(":")
        if kind == "npm":
            base, url = npm_registry, npm_url(npm_registry, name)
        elif kind == "pypi":
            base, url = pypi_url, pypi_json_url(pypi_url, name)
        else:
            out[key] = None
            continue
        ckey = f"{base.rstrip('/')}|{key}"
        entry = cache.get(ckey)
        if (
            isinstance(entry, dict)
            and isinstance(entry.get("version"), str)
            and 0 <= stamp - float(entry.get("checked", 0)) < CACHE_TTL_S
        ):
            out[key] = entry["version"]
            continue
        out[key] = None
        to_fetch.append((key, ckey, url))
    if not to_fetch or not allow_network or client_factory is None:
        return out
    with client_factory() as client:

        def fetch(item: tuple[str, str, str]) -> tuple[str, str, str | None]:
            key, ckey, url = item
            try:
                resp = client.get(url, headers={"accept": NPM_ACCEPT if key.startswith("npm:") else "application/json"})
                if resp.status_code != 200:
                    return key, ckey, None
                body = resp.json()
            except Exception:  # any transport or JSON failure means "latest unknown"
                return key, ckey, None
            return key, ckey, parse_npm_latest(body) if key.startswith("npm:") else parse_pypi_latest(body)

        # each request is bounded by the client's whole-request deadline; the budget only backs that up
        got = map_parallel(fetch, to_fetch, FETCH_BUDGET_S, None, "registry")
        fetched = [g or (key, ckey, None) for g, (key, ckey, _) in zip(got, to_fetch, strict=True)]
    changed = False
    for key, ckey, version in fetched:
        out[key] = version
        if version is not None:
            cache[ckey] = {"version": version, "checked": stamp}
            changed = True
    if changed:
        _write_cache(cache_path, cache)
    return out
