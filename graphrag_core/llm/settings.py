"""Model settings: one validated object, read with pydantic-settings (:class:`ModelEnvironment`)
from the mapping a front end passes (:meth:`ModelSettings.from_mapping`: the command line its
environment, the app ``st.secrets`` overlaid by it), and a front end's choice over them
(:class:`ModelChoice`, :func:`resolve_model_settings`).

Building a model from settings is :func:`graphrag_core.llm.factory.build_chat_model`: the
adapters import this module, so it imports no adapter.

The engine never reads the environment itself; the app and the command line choose the source.
The API key is a ``SecretStr``: ``repr``, ``str``,
``model_dump`` and ``model_dump_json`` of the settings show it as ``**********``, and no error
message raised here quotes it.

Keys read (values may be strings, as in the environment, or typed, as in TOML secrets):

==============================  ===================================================
``GRAPHRAG_LLM_PROVIDER``       ``offline`` or ``openai``; default: ``openai`` when a
                                base URL or key is configured, else ``offline``
``GRAPHRAG_LLM_BASE_URL``       OpenAI-compatible endpoint (OpenAI, Azure, vLLM, Ollama)
``GRAPHRAG_LLM_API_KEY``        falls back to ``OPENAI_API_KEY``
``GRAPHRAG_LLM_MODEL``          model (or Azure deployment) name
``GRAPHRAG_LLM_TEMPERATURE``    float >= 0
``GRAPHRAG_LLM_TIMEOUT``        seconds per call, > 0
``GRAPHRAG_LLM_JSON_MODE``      true/false: send ``response_format=json_object``
``GRAPHRAG_LLM_STRUCTURED_OUTPUT`` true/false: send each call's JSON Schema as structured
                                output where the endpoint accepts it (default true)
``GRAPHRAG_LLM_API_VERSION``    set for Azure OpenAI
``GRAPHRAG_LLM_OFFLINE_LATENCY`` ``"min,max"`` seconds of simulated delay (offline)
``GRAPHRAG_LLM_OFFLINE_SEED``   seed of that delay
``GRAPHRAG_LLM_ALLOWED_BASE_URLS`` further endpoints (comma- or space-separated) that may
                                receive the configured key; the configured base URL
                                always may, no other endpoint ever does
``GRAPHRAG_LLM_PRICE_PROMPT``   price per million prompt tokens (shown as money)
``GRAPHRAG_LLM_PRICE_COMPLETION`` price per million completion tokens
``GRAPHRAG_LLM_PRICE_CACHED``   price per million prompt tokens served from the endpoint's
                                prompt cache (default: the prompt price)
==============================  ===================================================
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, get_args
from urllib.parse import urlsplit

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, InitSettingsSource, SettingsConfigDict

if TYPE_CHECKING:
    from ..figures import Price

Provider = Literal["offline", "openai"]
PROVIDERS: tuple[Provider, ...] = get_args(Provider)
"""The model providers, in the order the app and the command line offer them."""

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_TEMPERATURE = 0.0
DEFAULT_TIMEOUT_S = 60.0

KEY_PROVIDER = "GRAPHRAG_LLM_PROVIDER"
KEY_BASE_URL = "GRAPHRAG_LLM_BASE_URL"
KEY_API_KEY = "GRAPHRAG_LLM_API_KEY"
KEY_API_KEY_FALLBACK = "OPENAI_API_KEY"
KEY_MODEL = "GRAPHRAG_LLM_MODEL"
KEY_TEMPERATURE = "GRAPHRAG_LLM_TEMPERATURE"
KEY_TIMEOUT = "GRAPHRAG_LLM_TIMEOUT"
KEY_JSON_MODE = "GRAPHRAG_LLM_JSON_MODE"
KEY_STRUCTURED_OUTPUT = "GRAPHRAG_LLM_STRUCTURED_OUTPUT"
KEY_API_VERSION = "GRAPHRAG_LLM_API_VERSION"
KEY_OFFLINE_LATENCY = "GRAPHRAG_LLM_OFFLINE_LATENCY"
KEY_OFFLINE_SEED = "GRAPHRAG_LLM_OFFLINE_SEED"
KEY_ALLOWED_BASE_URLS = "GRAPHRAG_LLM_ALLOWED_BASE_URLS"
KEY_PRICE_PROMPT = "GRAPHRAG_LLM_PRICE_PROMPT"
KEY_PRICE_COMPLETION = "GRAPHRAG_LLM_PRICE_COMPLETION"
KEY_PRICE_CACHED = "GRAPHRAG_LLM_PRICE_CACHED"


class SettingsError(ValueError):
    """A model setting has a value that cannot be used; the message names the key, never a secret."""


class ModelSettings(BaseModel):
    """Which chat model to use and how to reach it. Every default lives here.

    Invariants: ``provider == "openai"`` implies a non-empty ``model`` and a ``base_url`` with
    an http(s) scheme and a host (``DEFAULT_OPENAI_BASE_URL`` when none was given);
    ``offline_latency`` is ``(min_s, max_s)`` with ``0 <= min_s <= max_s``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: Provider = "offline"
    base_url: str | None = None
    api_key: SecretStr | None = None
    model: str = DEFAULT_MODEL
    json_mode: bool = True
    structured_output: bool = True
    temperature: float = Field(default=DEFAULT_TEMPERATURE, ge=0.0, le=2.0)
    timeout: float = Field(default=DEFAULT_TIMEOUT_S, gt=0.0)
    api_version: str | None = None
    offline_latency: tuple[float, float] | None = None
    offline_seed: int = 0
    allowed_base_urls: tuple[str, ...] = ()
    price_prompt: float | None = Field(default=None, ge=0.0)
    """Money per million prompt tokens; with ``price_completion``, runs show their cost."""
    price_completion: float | None = Field(default=None, ge=0.0)
    price_cached: float | None = Field(default=None, ge=0.0)
    """Money per million prompt tokens the endpoint served from its prompt cache (None: the prompt price)."""

    @property
    def price(self) -> "Price | None":
        """The configured price, or None when the prompt or the completion price is missing."""
        from ..figures import Price

        if self.price_prompt is None or self.price_completion is None:
            return None
        return Price(self.price_prompt, self.price_completion, self.price_cached)

    @field_validator("base_url", "api_version")
    @classmethod
    def _blank_is_none(cls, value: str | None) -> str | None:
        return value.strip() or None if value is not None else None

    @field_validator("api_key")
    @classmethod
    def _blank_key_is_none(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value().strip():
            return None
        return SecretStr(value.get_secret_value().strip())

    @model_validator(mode="after")
    def _check(self) -> "ModelSettings":
        if self.offline_latency is not None:
            low, high = self.offline_latency
            if low < 0 or high < low:
                raise ValueError("offline_latency must be (min_s, max_s) with 0 <= min_s <= max_s.")
        if self.provider == "openai":
            if not self.model.strip():
                raise ValueError("model must not be empty for the openai provider.")
            if self.base_url is None:
                object.__setattr__(self, "base_url", DEFAULT_OPENAI_BASE_URL)
            parts = urlsplit(self.base_url or "")
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError("base_url must be an http(s) URL with a host.")
        return self

    @property
    def host(self) -> str:
        """The endpoint's host (and port when given), without credentials or path."""
        parts = urlsplit(self.base_url or "")
        if not parts.hostname:
            return ""
        return f"{parts.hostname}:{parts.port}" if parts.port else parts.hostname

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any]) -> "ModelSettings":
        """Settings from ``GRAPHRAG_LLM_*`` keys (see the module docstring); missing keys take
        the defaults. Raises :class:`SettingsError` naming the offending key."""
        return ModelEnvironment.from_mapping(mapping).model_settings()

    def key_may_go_to(self, base_url: str | None) -> bool:
        """True when the configured key may be sent to ``base_url``: the configured endpoint
        (``DEFAULT_OPENAI_BASE_URL`` when none is set) or one of ``allowed_base_urls``."""
        target = endpoint_key(base_url or DEFAULT_OPENAI_BASE_URL)
        trusted = [self.base_url or DEFAULT_OPENAI_BASE_URL, *self.allowed_base_urls]
        return target is not None and target in {endpoint_key(url) for url in trusted}

    def for_endpoint(self, *, base_url: str = "", api_key: str = "", model: str = "") -> "ModelSettings":
        """These settings pointed at an OpenAI-compatible endpoint chosen outside the
        configuration (a link, a page, a command-line option).

        Invariant: the configured key travels only to an endpoint :meth:`key_may_go_to`
        accepts; any other endpoint gets ``api_key`` (a key its user typed) or no key at all.
        Raises :class:`SettingsError` naming the field when a choice cannot be used."""
        data = self.model_dump()
        data["provider"] = "openai"
        if base_url.strip():
            data["base_url"] = base_url.strip()
        if model.strip():
            data["model"] = model.strip()
        if api_key.strip():
            data["api_key"] = api_key.strip()
        elif self.api_key is not None and self.key_may_go_to(data["base_url"]):
            data["api_key"] = self.api_key.get_secret_value()
        else:
            data["api_key"] = None
        try:
            return ModelSettings(**data)
        except ValueError as exc:  # pydantic's ValidationError; its text never includes a SecretStr
            raise SettingsError(f"Invalid model settings: {_first_error(exc)}") from None

    def describe(self) -> dict[str, object]:
        """What the page and run records may show: everything but the key, which is only
        reported as set or not."""
        shown = self.model_dump(exclude={"api_key"})
        shown["api_key_set"] = self.api_key is not None
        return shown


OFFLINE_LATENCY_SPREAD = 0.5
"""A chosen offline latency of ``x`` seconds draws each call's delay from ``[x/2, 3x/2]``."""


class ModelChoice(BaseModel):
    """What a front end lets its user choose about a run's model, over the configured settings:
    the command line's ``--model``/``--base-url``/``--model-name``/``--api-key-env``, the app's
    model, endpoint, typed key and simulated latency, a sweep's or an evaluation's model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: Provider | None = None
    """None: the configured provider."""
    model: str = ""
    base_url: str = ""
    api_key: str = ""
    """A key typed by this user (never the configured one); blank for none."""
    offline_latency_s: float | None = Field(default=None, ge=0.0)
    """The offline model's average simulated latency (0: none); None keeps the configured one."""


def resolve_model_settings(configured: ModelSettings, choice: ModelChoice | None = None) -> ModelSettings:
    """The settings of the model a run calls: ``configured`` with ``choice`` applied. The one
    place every front end (command line, Explore, Sweeps, Evaluate) turns a choice into settings.

    The configured key goes only to the configured (or an allow-listed) endpoint: another base
    URL is called with the typed key or with none (:meth:`ModelSettings.for_endpoint`). Raises
    :class:`SettingsError` naming the field when a choice cannot be used."""
    choice = choice or ModelChoice()
    provider = choice.provider or configured.provider
    if provider == "openai":
        if configured.provider == "openai" and not (choice.base_url.strip() or choice.model.strip() or choice.api_key.strip()):
            return configured
        return configured.for_endpoint(base_url=choice.base_url, api_key=choice.api_key, model=choice.model)
    latency = configured.offline_latency
    if choice.offline_latency_s is not None:
        mean, spread = choice.offline_latency_s, OFFLINE_LATENCY_SPREAD
        latency = (mean * (1 - spread), mean * (1 + spread)) if mean > 0 else None
    return configured.model_copy(update={"provider": "offline", "offline_latency": latency})


def endpoint_key(url: str | None) -> tuple[str, str, int | None, str] | None:
    """What makes two base URLs the same endpoint: scheme, host, port (the scheme's default
    when absent) and path without a trailing slash; None for a URL without a host."""
    parts = urlsplit((url or "").strip())
    if not parts.hostname:
        return None
    try:
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    default_port = {"http": 80, "https": 443}.get(scheme)
    return scheme, parts.hostname.lower(), port if port is not None else default_port, parts.path.rstrip("/")


def _first_error(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        return f"{where}: {first.get('msg', '')}" if where else str(first.get("msg", ""))
    return str(exc)


def _latency(value: Any) -> Any:
    """``"min,max"`` (or ``"min;max"``, or one number for both) as a pair of numbers' texts."""
    if isinstance(value, str):
        pieces: list[Any] = value.replace(";", ",").split(",")
    elif isinstance(value, (list, tuple)):
        pieces = list(value)
    else:
        pieces = [value]
    if len(pieces) == 1:
        pieces = pieces * 2
    return tuple(piece.strip() if isinstance(piece, str) else piece for piece in pieces)


_EXPECTED: dict[str, str] = {
    KEY_TEMPERATURE: "a number",
    KEY_TIMEOUT: "a number",
    KEY_OFFLINE_SEED: "an integer",
    KEY_JSON_MODE: "true or false",
    KEY_OFFLINE_LATENCY: "'min,max' seconds",
    KEY_PRICE_PROMPT: "a price per million tokens, 0 or more",
    KEY_PRICE_COMPLETION: "a price per million tokens, 0 or more",
    KEY_PRICE_CACHED: "a price per million tokens, 0 or more",
}


class ModelEnvironment(BaseSettings):
    """The model's environment variables as read, before they are combined into
    :class:`ModelSettings`: each field names its variable (``validation_alias``), so the names
    are declared once. It reads only the mapping it is given (:meth:`from_mapping`): the front
    ends pass their environment (the app ``st.secrets`` overlaid by it), the engine reads none."""

    model_config = SettingsConfigDict(frozen=True, extra="ignore", case_sensitive=True, env_ignore_empty=True)

    provider: str | None = Field(default=None, validation_alias=KEY_PROVIDER)
    base_url: str | None = Field(default=None, validation_alias=KEY_BASE_URL)
    api_key: SecretStr | None = Field(default=None, validation_alias=AliasChoices(KEY_API_KEY, KEY_API_KEY_FALLBACK))
    model: str | None = Field(default=None, validation_alias=KEY_MODEL)
    temperature: float | None = Field(default=None, validation_alias=KEY_TEMPERATURE)
    timeout: float | None = Field(default=None, validation_alias=KEY_TIMEOUT)
    json_mode: bool | None = Field(default=None, validation_alias=KEY_JSON_MODE)
    structured_output: bool | None = Field(default=None, validation_alias=KEY_STRUCTURED_OUTPUT)
    api_version: str | None = Field(default=None, validation_alias=KEY_API_VERSION)
    offline_latency: tuple[float, float] | None = Field(default=None, validation_alias=KEY_OFFLINE_LATENCY)
    offline_seed: int | None = Field(default=None, validation_alias=KEY_OFFLINE_SEED)
    allowed_base_urls: str | None = Field(default=None, validation_alias=KEY_ALLOWED_BASE_URLS)
    price_prompt: float | None = Field(default=None, ge=0.0, validation_alias=KEY_PRICE_PROMPT)
    price_completion: float | None = Field(default=None, ge=0.0, validation_alias=KEY_PRICE_COMPLETION)
    price_cached: float | None = Field(default=None, ge=0.0, validation_alias=KEY_PRICE_CACHED)

    @field_validator("*", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            return None
        return value.strip() if isinstance(value, str) else value

    @field_validator("offline_latency", mode="before")
    @classmethod
    def _latency_pair(cls, value: Any) -> Any:
        return None if value is None else _latency(value)

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, env_settings, dotenv_settings, file_secret_settings):  # type: ignore[no-untyped-def, override]
        return (init_settings,)  # the front ends pass the environment (and st.secrets) themselves

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any]) -> "ModelEnvironment":
        """The variables of ``mapping`` only (the environment is not read); raises
        :class:`SettingsError` naming the offending key."""
        data = dict(mapping)
        if not _text_of(data.get(KEY_API_KEY)):  # a blank key falls back to OPENAI_API_KEY
            data.pop(KEY_API_KEY, None)
        try:  # the mapping as the only source: pydantic-settings' own, without the environment
            return cls(_build_sources=((InitSettingsSource(cls, init_kwargs=data),), data))
        except ValidationError as exc:
            raise SettingsError(_describe(exc)) from None

    def model_settings(self) -> ModelSettings:
        """The settings these variables describe; raises :class:`SettingsError`."""
        key = self.api_key.get_secret_value() if self.api_key is not None else ""
        provider = (self.provider or "").lower() or ("openai" if self.base_url or key.strip() else "offline")
        if provider not in PROVIDERS:
            raise SettingsError(f"{KEY_PROVIDER} must be 'offline' or 'openai', not {provider!r}.")
        values: dict[str, Any] = {"provider": provider, "base_url": self.base_url, "api_version": self.api_version}
        if key.strip():
            values["api_key"] = self.api_key
        for name in ("model", "temperature", "timeout", "json_mode", "structured_output", "offline_latency", "offline_seed", "price_prompt", "price_completion", "price_cached"):
            if (value := getattr(self, name)) is not None:
                values[name] = value
        if self.allowed_base_urls:
            values["allowed_base_urls"] = tuple(self.allowed_base_urls.replace(",", " ").split())
        try:
            return ModelSettings(**values)
        except ValueError as exc:  # pydantic's ValidationError; its text never includes a SecretStr
            raise SettingsError(f"Invalid model settings: {_first_error(exc)}") from None


def _text_of(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _describe(exc: ValidationError) -> str:
    """The first error, naming its variable; the value is quoted unless it could be the key."""
    first = exc.errors(include_url=False)[0]
    key = str(first.get("loc", ("",))[0])
    expected = _EXPECTED.get(key)
    if expected is None:
        return f"{key} is not valid: {first.get('msg', '')}."
    value = first.get("input")
    if isinstance(value, tuple):
        value = ",".join(str(v) for v in value)
    return f"{key} must be {expected}, not {str(value)[:40]!r}."


__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_OPENAI_BASE_URL",
    "DEFAULT_TEMPERATURE",
    "DEFAULT_TIMEOUT_S",
    "KEY_ALLOWED_BASE_URLS",
    "KEY_API_KEY",
    "KEY_API_KEY_FALLBACK",
    "KEY_API_VERSION",
    "KEY_BASE_URL",
    "KEY_JSON_MODE",
    "KEY_MODEL",
    "KEY_OFFLINE_LATENCY",
    "KEY_OFFLINE_SEED",
    "KEY_PRICE_CACHED",
    "KEY_PRICE_COMPLETION",
    "KEY_PRICE_PROMPT",
    "KEY_PROVIDER",
    "KEY_STRUCTURED_OUTPUT",
    "KEY_TEMPERATURE",
    "KEY_TIMEOUT",
    "OFFLINE_LATENCY_SPREAD",
    "PROVIDERS",
    "ModelChoice",
    "ModelEnvironment",
    "ModelSettings",
    "Provider",
    "SettingsError",
    "endpoint_key",
    "resolve_model_settings",
]
