"""The `client` check: which AI clients are installed, how they are set up, and whether they are current.

Contract: reads PATH, settings files and the environment only through `ctx`; runs each version command through
`probes.local_commands` (no stdin, short timeout, process group killed on timeout) and compares with the latest
release (`probes.local_registry`, cached a day). Findings are client evidence (outdated client, conflicting
installs) plus weak quota evidence for many concurrent sessions; configuration findings come from the pure
`checks.client_config`. Must not read credential files, print secret values, or raise for an expected situation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capdoctor.checks.base import Need
from capdoctor.checks.client_config import PROVIDER_CLIENTS, assess_configs, config_data
from capdoctor.checks.registry import Registered
from capdoctor.model import Cause, Finding, NextStep, Status, Strength, result_of
from capdoctor.probes.local_clients import (
    CLIENTS,
    HTTP_STACK_PACKAGES,
    NODE,
    SDK_PACKAGES,
    SDK_UPDATE,
    ClientSpec,
    parse_sdk_probe,
    read_client_configs,
    sdk_probe_script,
)
from capdoctor.probes.local_versions import FAR_BEHIND_DEFAULT, Lag, Version, far_behind, lag, parse_version
from capdoctor.run.threads import map_parallel

if TYPE_CHECKING:
    from capdoctor.model import CheckResult
    from capdoctor.probes.local_commands import CommandOutput
    from capdoctor.run.context import Context

MAX_COPIES = 3
"""At most this many copies of one client on PATH get their version asked."""

CONCURRENT_SESSIONS_WEAK = 3
"""This many running sessions of one client are weak quota evidence (多端并发: one account, many users)."""


@dataclass
class Install:
    """One client found on PATH: the copy that runs, its version, and the other copies."""

    spec: ClientSpec
    path: Path
    output: CommandOutput
    version: Version | None
    others: list[tuple[Path, CommandOutput, Version | None]] = field(default_factory=list)
    latest: Version | None = None
    lag: Lag | None = None


def _version_timeout(ctx: Context) -> float:
    return ctx.timeout(float(ctx.options["client_version_timeout"]))


def _discover(ctx: Context) -> tuple[list[Install], Install | None, dict[str, str], str | None]:
    """Installed clients (with versions), Node.js when an npm client needs it, and the user's Python SDKs."""
    from capdoctor.probes.local_commands import CommandOutput, find_all, run_command

    env = dict(ctx.env)
    located = {spec.id: find_all(spec.executable, env, ctx.platform)[:MAX_COPIES] for spec in CLIENTS}
    needs_node = any(located[s.id] and s.min_node_major for s in CLIENTS)
    node_paths = find_all(NODE.executable, env, ctx.platform)[:1] if needs_node else []
    # on Windows `python3` is often the Microsoft Store alias, which opens the Store instead of running
    names = ("python", "python3") if ctx.platform == "win32" else ("python3", "python")
    pythons = find_all(names[0], env, ctx.platform)[:1] or find_all(names[1], env, ctx.platform)[:1]
    jobs: list[tuple[str, Path, list[str]]] = []
    for spec in CLIENTS:
        jobs += [(spec.id, p, [str(p), *spec.version_args]) for p in located[spec.id]]
    jobs += [("node", p, [str(p), "--version"]) for p in node_paths]
    all_sdk = (*SDK_PACKAGES, *HTTP_STACK_PACKAGES)
    jobs += [("python", p, [str(p), "-c", sdk_probe_script(all_sdk)]) for p in pythons]
    timeout = _version_timeout(ctx)
    outputs: dict[tuple[str, Path], CommandOutput] = {}
    if jobs:
        # each command is killed at `timeout`; the budget's extra second covers the kill and the pipe's close
        results = map_parallel(lambda j: run_command(j[2], env, timeout), jobs, timeout + 1.0, None, "version")
        for (cid, path, argv), out in zip(jobs, results, strict=True):
            outputs[(cid, path)] = out or CommandOutput(tuple(argv), error=f"timed out after {timeout:.1f} s")
    installs: list[Install] = []
    for spec in CLIENTS:
        paths = located[spec.id]
        if not paths:
            continue
        first = outputs[(spec.id, paths[0])]
        inst = Install(spec, paths[0], first, _version_of(first))
        inst.others = [(p, outputs[(spec.id, p)], _version_of(outputs[(spec.id, p)])) for p in paths[1:]]
        installs.append(inst)
    node = None
    if node_paths:
        out = outputs[("node", node_paths[0])]
        node = Install(NODE, node_paths[0], out, _version_of(out))
    sdks: dict[str, str] = {}
    python_error = None if pythons else "no python3 on PATH"
    if pythons:
        out = outputs[("python", pythons[0])]
        sdks = parse_sdk_probe(out.text) if out.ok else {}
        if not out.ok:
            python_error = f"{pythons[0]}: {out.error or f'exit status {out.returncode}'}"
    return installs, node, sdks, python_error


def _version_of(out: CommandOutput) -> Version | None:
    return parse_version(out.text) if out.error is None else None


def _lookups_allowed(ctx: Context, override_key: str) -> bool:
    if ctx.options[override_key]:
        return True
    return not ctx.options["no_network_lookups"]


def _latest(ctx: Context, keys: Sequence[str]) -> dict[str, str | None]:
    """Latest releases for `keys`, npm and PyPI each allowed or not on their own (see `_lookups_allowed`)."""
    from capdoctor.probes.local_registry import NPM_REGISTRY, PYPI_URL, latest_versions

    npm = str(ctx.options["npm_registry"] or NPM_REGISTRY)
    pypi = str(ctx.options["pypi_url"] or PYPI_URL)
    out: dict[str, str | None] = {}
    for kind, option in (("npm", "npm_registry"), ("pypi", "pypi_url")):
        mine = [k for k in keys if k.startswith(kind + ":")]
        if not mine:
            continue
        out.update(
            latest_versions(
                mine,
                npm_registry=npm,
                pypi_url=pypi,
                cache_dir=ctx.cache_dir,
                allow_network=_lookups_allowed(ctx, option),
                client_factory=lambda: ctx.http_client(timeout=3.0),
                now=ctx.now().timestamp(),
            )
        )
    return out


def _available_models(ctx: Context) -> list[str] | None:
    models = ctx.results.get("models")
    raw = models.data.get("available_models") if models is not None else None
    if not isinstance(raw, (list, tuple)):
        return None
    out = []
    for item in raw:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, Mapping) and isinstance(item.get("id"), str):
            out.append(str(item["id"]))
    return out


def _newer_version_asked(ctx: Context) -> Finding | None:
    """The `models` finding that says the provider wants a newer client (the classifier's `newer_client` mark in
    its text or its signature), if there is one."""
    from capdoctor.classifier.marks import marked

    models = ctx.results.get("models")
    if models is None:
        return None
    for f in models.findings:
        text = f"{f.message} {f.data.get('signature', '')} {f.data.get('body', '')}"
        if f.cause is Cause.CLIENT and marked("newer_client", text):
            return f
    return None


class ClientCheck(Registered, check_id="client"):
    """Local AI clients: installed versions against the latest, settings, concurrent sessions, the OS."""

    needs: frozenset[Need] = frozenset()
    after: tuple[str, ...] = ("models",)

    def run(self, ctx: Context) -> CheckResult:
        """Find the clients, their versions and settings; report what makes the client the likely cause."""
        from capdoctor.probes.hosts import port_open
        from capdoctor.probes.local_processes import count_sessions

        installs, node, sdks, python_error = _discover(ctx)
        keys = [i.spec.package for i in installs if i.spec.package]
        keys += [f"pypi:{p}" for p in SDK_PACKAGES if p in sdks]
        latest = _latest(ctx, keys) if keys else {}
        for inst in installs:
            raw = latest.get(inst.spec.package or "")
            inst.latest = parse_version(raw) if raw else None
            if inst.version and inst.latest:
                inst.lag = lag(inst.version, inst.latest)

        findings: list[Finding] = []
        details: list[str] = []
        for inst in installs:
            details.append(self._describe(inst))
            findings += self._install_findings(inst)
        findings += self._node_findings(installs, node, details)
        findings += self._sdk_findings(sdks, latest, details, python_error)

        configs = read_client_configs(ctx.env, ctx.home)
        config_findings, config_details = assess_configs(
            configs,
            ctx.env,
            ctx.target,
            _available_models(ctx),
            lambda host, port: port_open(host, port, ctx.timeout(0.5)) is True,
        )
        findings += config_findings
        details += config_details
        findings += self._newer_version_findings(ctx, installs)

        sessions = count_sessions(CLIENTS)
        findings += self._session_findings(installs, sessions, details)
        os_findings, os_data = self._os_change(ctx, details)
        findings += os_findings

        running = [  # clients at work that PATH does not show (an app's own copy, an absolute path)
            next(c.name for c in CLIENTS if c.id == cid)
            for cid in sorted(sessions)
            if cid not in {i.spec.id for i in installs}
        ]
        data: dict[str, Any] = {
            "clients": [self._install_data(i) for i in installs],
            "node": self._install_data(node) if node else None,
            "sdks": {p: {"version": sdks[p], "latest": latest.get(f"pypi:{p}")} for p in SDK_PACKAGES if p in sdks},
            "http_stack": {p: sdks[p] for p in HTTP_STACK_PACKAGES if p in sdks},
            "configs": [config_data(c) for c in configs],
            "sessions": {cid: len(pids) for cid, pids in sessions.items()},
            "os": os_data,
        }
        return result_of(
            self, self._status(findings), self._summary(installs, findings, running), findings, details, data
        )

    @staticmethod
    def _session_findings(
        installs: Sequence[Install], sessions: Mapping[str, Sequence[int]], details: list[str]
    ) -> list[Finding]:
        """Each client's running sessions, into `details`; many of one client at once are weak quota evidence
        (they share one account's limits)."""
        findings: list[Finding] = []
        for cid, pids in sorted(sessions.items()):
            name = next(s.name for s in CLIENTS if s.id == cid)
            elsewhere = "" if any(i.spec.id == cid for i in installs) else " (its executable is not on PATH)"
            details.append(f"{name}: {len(pids)} running session(s){elsewhere}")
            if len(pids) >= CONCURRENT_SESSIONS_WEAK:
                findings.append(
                    Finding(
                        Cause.QUOTA,
                        Strength.WEAK,
                        f"{len(pids)} {name} sessions are running at once; on one account they share "
                        "(and drain) the same rate and usage limits",
                        data={"client": cid, "sessions": len(pids)},
                        next_steps=(
                            NextStep(
                                f"Close the {name} sessions you are not using, or spread them over "
                                "separate accounts/keys"
                            ),
                        ),
                    )
                )
        return findings

    @staticmethod
    def _os_change(ctx: Context, details: list[str]) -> tuple[list[Finding], dict[str, Any]]:
        """The OS, into `details` and its report data, and a context finding when it changed since the last run."""
        from capdoctor.probes.local_os import facts_dict, os_facts, remember_os

        findings: list[Finding] = []
        facts = os_facts()
        change = remember_os(ctx.data_dir, facts, ctx.now())
        details.append(f"OS: {facts.version} ({facts.name} {facts.release}, {facts.arch})")
        os_data: dict[str, Any] = dict(facts_dict(facts))
        if change is not None:
            os_data["changed_from"] = dict(facts_dict(change.before))
            os_data["last_seen"] = change.seen_at
            findings.append(
                Finding(
                    Cause.CLIENT,
                    Strength.CONTEXT,
                    f"the OS changed since capdoctor last ran here "
                    f"({change.before.version} → {facts.version}); "
                    "if the errors started after that upgrade, update or reinstall the client",
                    data={"before": change.before.version, "after": facts.version},
                )
            )
        return findings, os_data

    # -- installs ---------------------------------------------------------------------------------------

    @staticmethod
    def _describe(inst: Install) -> str:
        name = inst.spec.name
        if inst.output.error:
            return f"{name}: {inst.path} — {inst.output.error}"
        if inst.version is None:
            first = (inst.output.text.splitlines() or ["(no output)"])[0][:80]
            return f"{name}: {inst.path} — unrecognised version output: {first!r}"
        latest = f"latest {inst.latest}" if inst.latest else "latest unknown"
        state = ""
        if inst.lag is not None:
            state = " (update available)" if inst.lag.behind else " (current)"
        return f"{name} {inst.version} at {inst.path}; {latest}{state}"

    @staticmethod
    def _install_findings(inst: Install) -> list[Finding]:
        out: list[Finding] = []
        name, spec = inst.spec.name, inst.spec
        update = NextStep(f"Update {name}", spec.update_command) if spec.update_command else None
        if inst.output.error and "timed out" in inst.output.error:
            # slow, not broken: a Node client's start-up (`gemini --version` takes 1.5 s idle) passes any short
            # timeout on a loaded machine, so a slow answer weighs nothing and says only that it was slow
            out.append(
                Finding(
                    Cause.CLIENT,
                    Strength.CONTEXT,
                    f"`{spec.executable} --version` was slow: no answer yet when capdoctor stopped waiting "
                    f"({inst.output.error}); a loaded machine or a slow start, so its version is unknown",
                    data={"client": spec.id, "path": str(inst.path), "slow": True},
                    next_steps=(
                        NextStep(
                            f"Run `{spec.executable} --version` again; if it is always slow, raise "
                            "client_version_timeout in capdoctor.toml."
                        ),
                    ),
                )
            )
        if inst.lag is not None and inst.version and inst.latest:
            thresholds = {**FAR_BEHIND_DEFAULT, **dict(spec.far_behind)}
            if far_behind(inst.lag, thresholds):
                out.append(
                    Finding(
                        Cause.CLIENT,
                        Strength.WEAK,
                        f"{name} {inst.version} is far behind the latest {inst.latest} "
                        f"({inst.lag.distance} {inst.lag.level} release(s)); "
                        "old clients miss model and protocol changes",
                        data={"client": spec.id, "installed": str(inst.version), "latest": str(inst.latest)},
                        next_steps=(update,) if update else (),
                    )
                )
        versions = {str(v) for _, o, v in inst.others} | {str(inst.version)}
        if inst.others and (len(versions) > 1 or None in [v for _, _, v in inst.others]):
            listing = "; ".join(
                [f"{inst.path} ({inst.version or 'unknown'})"] + [f"{p} ({v or 'unknown'})" for p, _, v in inst.others]
            )
            out.append(
                Finding(
                    Cause.CLIENT,
                    Strength.WEAK,
                    f"{len(inst.others) + 1} different `{spec.executable}` installs on PATH: {listing}; "
                    "the first one runs, which may not be the one you updated",
                    data={"client": spec.id, "paths": [str(inst.path)] + [str(p) for p, _, _ in inst.others]},
                    next_steps=(
                        NextStep(
                            f"Remove the copies you do not use, or put the updated one first on PATH "
                            f"(check with: which -a {spec.executable})"
                        ),
                    ),
                )
            )
        return out

    @staticmethod
    def _node_findings(installs: Sequence[Install], node: Install | None, details: list[str]) -> list[Finding]:
        npm_clients = [i for i in installs if i.spec.min_node_major]
        if not npm_clients:
            return []
        if node is None:
            details.append("Node.js: not on PATH (npm-installed clients may bundle their own)")
            return []
        details.append(f"Node.js {node.version or 'unknown'} at {node.path}")
        out: list[Finding] = []
        for inst in npm_clients:
            need = inst.spec.min_node_major
            if node.version is not None and need is not None and node.version.major < need:
                out.append(
                    Finding(
                        Cause.CLIENT,
                        Strength.WEAK,
                        f"{inst.spec.name} needs Node.js {need} or newer; PATH has {node.version}",
                        data={"client": inst.spec.id, "node": str(node.version), "node_required": need},
                        next_steps=(NextStep(f"Install Node.js {need}+ (e.g. nvm install {need})"),),
                    )
                )
        return out

    @staticmethod
    def _sdk_findings(
        sdks: Mapping[str, str],
        latest: Mapping[str, str | None],
        details: list[str],
        python_error: str | None,
    ) -> list[Finding]:
        if python_error:
            details.append(f"Python SDKs: not inspected ({python_error})")
        out: list[Finding] = []
        for pkg in SDK_PACKAGES:
            if pkg not in sdks:
                continue
            have, newest = parse_version(sdks[pkg]), latest.get(f"pypi:{pkg}")
            details.append(f"Python SDK {pkg} {sdks[pkg]}; {f'latest {newest}' if newest else 'latest unknown'}")
            new_v = parse_version(newest) if newest else None
            if have and new_v and lag(have, new_v).level == "major":
                out.append(
                    Finding(
                        Cause.CLIENT,
                        Strength.CONTEXT,
                        f"the {pkg} SDK {have} is a major version behind {new_v}",
                        data={"package": pkg, "installed": str(have), "latest": str(new_v)},
                        next_steps=(NextStep(f"Update {pkg}", SDK_UPDATE.format(package=pkg)),),
                    )
                )
        stack = [f"{p} {sdks[p]}" for p in HTTP_STACK_PACKAGES if p in sdks]
        if stack:
            details.append("HTTP stack: " + ", ".join(stack))
        return out

    # -- models cross-check -----------------------------------------------------------------------------

    @staticmethod
    def _newer_version_findings(ctx: Context, installs: Sequence[Install]) -> list[Finding]:
        asked = _newer_version_asked(ctx)
        if asked is None or not installs:
            return []
        related = PROVIDER_CLIENTS.get(ctx.target.provider if ctx.target else "", ())
        candidates = [i for i in installs if i.spec.id in related] or list(installs)
        out: list[Finding] = []
        for inst in candidates:
            if inst.lag is not None and not inst.lag.behind:
                continue  # current: the request for a newer client is not about this one
            have = str(inst.version) if inst.version else "an unknown version"
            latest = f"; the latest is {inst.latest}" if inst.latest else " (latest unknown)"
            out.append(
                Finding(
                    Cause.CLIENT,
                    Strength.MODERATE,
                    f"the provider asks for a newer client and {inst.spec.name} is {have}{latest}",
                    data={
                        "client": inst.spec.id,
                        "installed": str(inst.version) if inst.version else None,
                        "latest": str(inst.latest) if inst.latest else None,
                    },
                    next_steps=(NextStep(f"Update {inst.spec.name}", inst.spec.update_command),),
                )
            )
        return out

    # -- result -----------------------------------------------------------------------------------------

    @staticmethod
    def _status(findings: Sequence[Finding]) -> Status:
        weights = {f.strength for f in findings if f.strength not in (Strength.CONTEXT, Strength.AGAINST)}
        if weights & {Strength.STRONG, Strength.MODERATE}:
            return Status.FAIL
        return Status.WARN if weights else Status.PASS

    @staticmethod
    def _summary(installs: Sequence[Install], findings: Sequence[Finding], running: Sequence[str] = ()) -> str:
        """What was found, then the weightiest finding. A client running from outside PATH is named: "no known
        AI client on PATH" beside its running sessions would contradict itself."""
        found = ", ".join(f"{i.spec.name} {i.version or '?'}" for i in installs)
        if running:
            elsewhere = f"{', '.join(running)} running (not from PATH)"
            found = f"{found}, {elsewhere}" if found else elsewhere
        elif not installs:
            found = "no known AI client on PATH"
        serious = [f for f in findings if f.strength in (Strength.STRONG, Strength.MODERATE)]
        if serious:
            return f"{found}; {serious[0].message}" + (f" (+{len(serious) - 1} more)" if len(serious) > 1 else "")
        weak = [f for f in findings if f.strength is Strength.WEAK]
        if weak:
            return f"{found}; {weak[0].message}"
        return found

    @staticmethod
    def _install_data(inst: Install) -> dict[str, Any]:
        return {
            "id": inst.spec.id,
            "name": inst.spec.name,
            "path": str(inst.path),
            "version": str(inst.version) if inst.version else None,
            "version_output": inst.output.text[:200] if inst.version is None else None,
            "error": inst.output.error,
            "latest": str(inst.latest) if inst.latest else None,
            "lag": inst.lag.level if inst.lag else None,
            "other_paths": [{"path": str(p), "version": str(v) if v else None} for p, _, v in inst.others],
            "update_command": inst.spec.update_command or None,
        }
