"""Model-layer settings, read from the environment (never from notebook parameters): the ``PSIT_*``
variables of :data:`FIELD_ENV` (``OPENAI_BASE_URL``/``OPENAI_API_KEY`` as fallbacks). Credentials are a
``SecretStr`` kept out of ``public_dict()`` (run metadata), cache keys and error messages."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Mapping

from pydantic import AliasChoices, BaseModel, BeforeValidator, ConfigDict, Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, EnvSettingsSource, NoDecode, SettingsConfigDict

from psit_lib.llm.errors import ConfigurationError
from psit_lib.llm.model_settings import ModelRequestSettings, load_model_settings
from psit_lib.llm.prompts import PROMPTS_ENV, read_overrides
from psit_lib.wire import SIM_MODEL_NAME

Backend = Literal["sim", "openai"]
CacheMode = Literal["off", "rw", "replay"]

SIM_BASE_URL = "http://psit-sim.invalid/v1"


FIELD_ENV = {"backend": "PSIT_BACKEND", "base_urls": "PSIT_BASE_URLS", "model": "PSIT_MODEL",
             "sim_profile": "PSIT_SIM_PROFILE", "concurrency": "PSIT_CONCURRENCY", "timeout": "PSIT_TIMEOUT",
             "max_retries": "PSIT_MAX_RETRIES", "cache": "PSIT_CACHE", "model_endpoints": "PSIT_MODEL_ENDPOINTS",
             "endpoint_concurrency": "PSIT_ENDPOINT_CONCURRENCY", "model_settings": "PSIT_MODEL_SETTINGS",
             "prompts_file": PROMPTS_ENV}
"""Which environment variable sets each setting (error messages name the variable at fault; ``psit
--help`` is checked to list every one)."""


def _split_urls(value: Any) -> Any:
    return tuple(u.strip() for u in value.split(",") if u.strip()) if isinstance(value, str) else value


def _endpoints(value: Any) -> Any:
    return parse_model_endpoints(value) if isinstance(value, str) else value


def _stripped(value: Any) -> Any:
    return value.strip() if isinstance(value, str) else value


Stripped = Annotated[str | None, BeforeValidator(_stripped)]


class _GivenEnvironment(EnvSettingsSource):
    """The environment variables of a given mapping instead of the process's (tests, checks)."""

    def __init__(self, settings_cls: type[BaseSettings], env: Mapping[str, str]) -> None:
        self._given = env
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return {k.lower(): v for k, v in self._given.items() if v != ""}  # as the process's, case-insensitive


class PsitEnvironment(BaseSettings):
    """The ``PSIT_*`` variables as set (``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` where the
    PSIT ones are unset; empty means unset), lightly parsed: :meth:`LLMSettings.from_env`
    validates them, naming the variable at fault."""

    model_config = SettingsConfigDict(env_prefix="PSIT_", env_ignore_empty=True,
                                      extra="ignore")

    backend: Annotated[str | None, BeforeValidator(lambda v: v.strip().lower() if isinstance(v, str) else v)] = None
    base_urls: Annotated[tuple[str, ...] | None, NoDecode, BeforeValidator(_split_urls)] = Field(
        None, validation_alias=AliasChoices("PSIT_BASE_URLS", "OPENAI_BASE_URL"))
    model_endpoints: Annotated[dict[str, tuple[str, ...]] | None, NoDecode, BeforeValidator(_endpoints)] = None
    api_key: str | None = Field(None, validation_alias=AliasChoices("PSIT_API_KEY", "OPENAI_API_KEY"))
    model: Stripped = None
    sim_profile: Stripped = None
    concurrency: Stripped = None
    timeout: Stripped = None
    endpoint_concurrency: Stripped = None
    max_retries: Stripped = None
    cache: Stripped = None
    model_settings: Annotated[str | None, BeforeValidator(lambda v: v if isinstance(v, str) and v.strip() else None)] = None
    prompts_file: Stripped = Field(None, validation_alias=PROMPTS_ENV)

    @classmethod
    def read(cls, env: Mapping[str, str] | None = None) -> "PsitEnvironment":
        """From the process's environment, or from ``env`` alone."""
        if env is None:
            return cls()
        given: Mapping[str, str] = env

        class Given(cls):  # type: ignore[valid-type,misc]
            @classmethod
            def settings_customise_sources(cls, settings_cls, *args: Any, **kwargs: Any):
                return (_GivenEnvironment(settings_cls, given),)

        return Given()


class LLMSettings(BaseModel):
    """Where model calls go and how they are made."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    backend: Backend = "sim"
    base_urls: tuple[str, ...] = ()
    model_endpoints: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    api_key: SecretStr | None = Field(default=None, repr=False)
    model: str = SIM_MODEL_NAME
    sim_profile: str = "default"
    concurrency: int = Field(default=32, ge=1, le=4096)
    endpoint_concurrency: int | None = Field(default=None, ge=1, le=4096)
    """Calls in flight at each replica at most (None: only ``concurrency`` bounds them)."""
    endpoint_slots: dict[str, int] = Field(default_factory=dict)
    """Calls in flight at named replicas (``PSIT_ENDPOINT_CONCURRENCY=url=n,...``), over ``endpoint_concurrency``."""
    timeout: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=5, ge=0, le=50)
    cache: CacheMode = "rw"
    backoff_base: float = Field(default=0.5, ge=0)
    backoff_max: float = Field(default=30.0, ge=0)
    model_settings: dict[str, ModelRequestSettings] = Field(default_factory=dict)
    """Per-model request settings (``PSIT_MODEL_SETTINGS``), by served model name."""
    model_settings_source: str | None = None
    """Where they came from (a file path, or 'inline JSON')."""
    prompts_file: str | None = None
    """A user's prompts file replacing templates by name (``PSIT_PROMPTS_FILE``), already checked."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> "LLMSettings":
        """Settings from environment variables, then ``overrides`` (per-run or per-call)."""
        given = PsitEnvironment.read(env)
        raw: dict[str, Any] = given.model_dump(exclude_none=True, exclude={"model_settings", "prompts_file",
                                                                             "endpoint_concurrency"})
        if given.model_settings:
            raw["model_settings_source"], raw["model_settings"] = load_model_settings(given.model_settings)
        if given.prompts_file:
            raw["prompts_file"] = read_overrides(given.prompts_file).source
        if given.endpoint_concurrency and "=" in given.endpoint_concurrency:
            raw["endpoint_slots"] = parse_endpoint_slots(given.endpoint_concurrency)  # the per-replica form
        elif given.endpoint_concurrency:
            raw["endpoint_concurrency"] = given.endpoint_concurrency
        raw.update({k: v for k, v in overrides.items() if v is not None})
        if raw.get("backend") == "openai" and not raw.get("model"):
            # Left at its default, the model would be the simulator's name: a server that ignores
            # model names (llama.cpp's) would answer, and the run would be labelled simulated.
            if raw.get("model_endpoints"):
                raw["model"] = next(iter(raw["model_endpoints"]))
            elif raw.get("base_urls"):
                raise ConfigurationError(
                    "PSIT_BACKEND=openai needs PSIT_MODEL, the name the server serves its model under "
                    f"(e.g. qwen3-32b; {SIM_MODEL_NAME} for a `psit sim serve` endpoint)")
        try:
            settings = cls(**raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = str(first["loc"][0]) if first["loc"] else "?"
            source = FIELD_ENV.get(field, field) if field not in overrides else field
            raise ConfigurationError(f"{source}={raw.get(field)!r} is not valid: {first['msg']}") from None
        if settings.backend == "openai" and not settings.base_urls and not settings.model_endpoints:
            raise ConfigurationError(
                "PSIT_BACKEND=openai needs an endpoint: set PSIT_BASE_URLS (or OPENAI_BASE_URL), "
                "e.g. http://localhost:8000/v1 for a vLLM server")
        return settings

    def urls_for(self, model: str) -> tuple[str, ...]:
        """The replicas serving ``model``: its own entry in the mapping, else the base URLs."""
        urls = self.model_endpoints.get(model) or self.base_urls
        if not urls:
            raise ConfigurationError(
                f"no endpoint serves model {model!r}: add it to PSIT_MODEL_ENDPOINTS or set PSIT_BASE_URLS")
        return urls

    def slots_for(self, url: str) -> int | None:
        """Calls ``url`` may have in flight (None: no limit beyond ``concurrency``)."""
        return self.endpoint_slots.get(url, self.endpoint_concurrency)

    def request_settings(self) -> ModelRequestSettings | None:
        """This client's model's own request settings, if the configuration names it."""
        return self.model_settings.get(self.model)

    @property
    def simulated(self) -> bool:
        """True for the embedded simulator and for a loopback ``psit sim serve`` endpoint."""
        return self.backend == "sim" or self.model.startswith(SIM_MODEL_NAME)

    @property
    def profile_label(self) -> str:
        """The profile shown in banners: a simulator profile, or 'n/a' for a real model."""
        return self.sim_profile if self.simulated else "n/a"

    def wire_model(self) -> str:
        """The model name sent: ``psit-sim`` becomes ``psit-sim:<profile>``, so the request alone says which
        simulated behaviour answers and the cache keeps profiles apart; real names are sent unchanged."""
        if self.simulated and self.model == SIM_MODEL_NAME:
            return f"{SIM_MODEL_NAME}:{self.sim_profile}"
        return self.model

    def public_dict(self) -> dict[str, Any]:
        """What run metadata may record: everything but the credentials."""
        data = self.model_dump(exclude={"api_key"})
        data["base_urls"] = list(self.base_urls) if self.backend == "openai" else ["in-process simulator"]
        data["model_endpoints"] = {m: list(u) for m, u in self.model_endpoints.items()}
        data["simulated"] = self.simulated
        return data


def parse_model_endpoints(text: str) -> dict[str, tuple[str, ...]]:
    """``a=u1,u2;b=u3`` -> ``{"a": ("u1", "u2"), "b": ("u3",)}``; a malformed entry is an error."""
    mapping: dict[str, tuple[str, ...]] = {}
    for entry in filter(None, (e.strip() for e in text.split(";"))):
        model, sep, urls = entry.partition("=")
        found = tuple(u.strip() for u in urls.split(",") if u.strip())
        if not sep or not model.strip() or not found:
            raise ConfigurationError(
                f"PSIT_MODEL_ENDPOINTS entry {entry!r} is not 'model=url[,url...]' (entries separated by ';')")
        mapping[model.strip()] = found
    return mapping


def parse_endpoint_slots(text: str) -> dict[str, int]:
    """``http://a/v1=2,http://b/v1=4`` -> ``{"http://a/v1": 2, "http://b/v1": 4}``; malformed is an error."""
    slots: dict[str, int] = {}
    for entry in filter(None, (e.strip() for e in text.split(","))):
        url, sep, count = entry.rpartition("=")
        if not sep or not url.strip() or not count.strip().isdigit() or int(count) < 1:
            raise ConfigurationError(
                f"PSIT_ENDPOINT_CONCURRENCY entry {entry!r} is not 'url=n' with n >= 1 (entries separated by ',')")
        slots[url.strip()] = int(count)
    return slots
