"""The Azure OpenAI provider: `https://<resource>.openai.azure.com/openai/v1` (or with `api-version`).

Contract: everything capdoctor knows about Azure OpenAI as one adapter class: the `api-key` header, the
AZURE_OPENAI_* variables (the endpoint variable names the resource, the client appends `/openai/v1`),
`api-version`, OpenAI's rate-limit spelling (whose `-1`/`0` placeholders the parser treats as unknown).
Keys are 32 hex characters with no prefix. No I/O here; no cause decisions.
"""

from __future__ import annotations

from capdoctor.providers.base import OUTPUT_TOKENS, X_RATELIMIT, StatusPage, join
from capdoctor.providers.compat import CompatAdapter
from capdoctor.run.context import Target


class AzureAdapter(CompatAdapter):
    """Azure OpenAI (`https://<res>.openai.azure.com/openai/v1` or with `api-version`): `api-key` header."""

    name = "azure"
    aliases = ("azure-openai",)
    default_base_url = ""
    default_model = ""
    official_hosts = (".openai.azure.com", ".cognitiveservices.azure.com")
    url_hosts = ("openai.azure.com", "cognitiveservices.azure.com")
    key_envs = ("AZURE_OPENAI_API_KEY",)
    key_required = True
    base_url_envs = ("AZURE_OPENAI_ENDPOINT",)
    model_envs = ("AZURE_OPENAI_DEPLOYMENT",)
    api_version_envs = ("AZURE_OPENAI_API_VERSION", "OPENAI_API_VERSION")
    claims_env = True
    routes: tuple[str, ...] = ("chat", "responses")
    ratelimit_headers = (X_RATELIMIT,)
    status_page = StatusPage("https://azure.status.microsoft", "", ("openai",))
    log_hints = r"azure|\.openai\.azure\.com"

    def base_url_from_env(self, value: str) -> str:
        """AZURE_OPENAI_ENDPOINT names the resource; the OpenAI v1 API lives under `/openai/v1`."""
        return value if "/openai" in value else join(value, "openai/v1")

    def auth_headers(self, target: Target) -> dict[str, str]:
        """Azure keys go in `api-key`."""
        return {"api-key": target.api_key} if target.api_key else {}

    def query(self, target: Target) -> dict[str, str]:
        """`api-version` when one was configured (the v1 API needs none)."""
        version = target.extra.get("api_version") if target.extra else None
        return {"api-version": str(version)} if version else {}

    def token_limit(self, model: str) -> dict[str, int]:
        """Azure follows OpenAI: reasoning deployments need `max_completion_tokens`."""
        return {"max_completion_tokens": OUTPUT_TOKENS}
