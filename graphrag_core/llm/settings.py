"""Model settings: one validated object, read from a mapping (``os.environ``, ``st.secrets``).

The engine never reads the environment; the app hands a mapping to
:meth:`ModelSettings.from_mapping`. The API key is a ``SecretStr``: ``repr``, ``str``,
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
``GRAPHRAG_LLM_API_VERSION``    set for Azure OpenAI
``GRAPHRAG_LLM_OFFLINE_LATENCY`` ``"min,max"`` seconds of simulated delay (offline)
``GRAPHRAG_LLM_OFFLINE_SEED``   seed of that delay
``GRAPHRAG_LLM_ALLOWED_BASE_URLS`` further endpoints (comma- or space-separated) that may
                                receive the configured key; the configured base URL
                                always may, no other endpoint ever does
==============================  ===================================================
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from .base import ChatModel

Provider = Literal["offline", "openai"]
PROVIDERS: tuple[Provider, ...] = get_args(Provider)
"""The model providers, in the order the app and the command line offer them."""

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_TEMPERATURE = 0.0
DEFAULT_TIMEOUT_S = 60.0

ENV_PREFIX = "GRAPHRAG_LLM_"
KEY_PROVIDER = "GRAPHRAG_LLM_PROVIDER"
KEY_BASE_URL = "GRAPHRAG_LLM_BASE_URL"
KEY_API_KEY = "GRAPHRAG_LLM_API_KEY"
KEY_API_KEY_FALLBACK = "OPENAI_API_KEY"
KEY_MODEL = "GRAPHRAG_LLM_MODEL"
KEY_TEMPERATURE = "GRAPHRAG_LLM_TEMPERATURE"
KEY_TIMEOUT = "GRAPHRAG_LLM_TIMEOUT"
KEY_JSON_MODE = "GRAPHRAG_LLM_JSON_MODE"
KEY_API_VERSION = "GRAPHRAG_LLM_API_VERSION"
KEY_OFFLINE_LATENCY = "GRAPHRAG_LLM_OFFLINE_LATENCY"
KEY_OFFLINE_SEED = "GRAPHRAG_LLM_OFFLINE_SEED"
KEY_ALLOWED_BASE_URLS = "GRAPHRAG_LLM_ALLOWED_BASE_URLS"

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


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
    temperature: float = Field(default=DEFAULT_TEMPERATURE, ge=0.0, le=2.0)
    timeout: float = Field(default=DEFAULT_TIMEOUT_S, gt=0.0)
    api_version: str | None = None
    offline_latency: tuple[float, float] | None = None
    offline_seed: int = 0
    allowed_base_urls: tuple[str, ...] = ()

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
        base_url = _text(mapping, KEY_BASE_URL)
        api_key = _text(mapping, KEY_API_KEY) or _text(mapping, KEY_API_KEY_FALLBACK)
        provider = (_text(mapping, KEY_PROVIDER) or "").lower() or ("openai" if base_url or api_key else "offline")
        if provider not in PROVIDERS:
            raise SettingsError(f"{KEY_PROVIDER} must be 'offline' or 'openai', not {provider!r}.")
        values: dict[str, Any] = {"provider": provider, "base_url": base_url, "api_version": _text(mapping, KEY_API_VERSION)}
        if api_key:
            values["api_key"] = SecretStr(api_key)
        if model := _text(mapping, KEY_MODEL):
            values["model"] = model
        if (temperature := _number(mapping, KEY_TEMPERATURE)) is not None:
            values["temperature"] = temperature
        if (timeout := _number(mapping, KEY_TIMEOUT)) is not None:
            values["timeout"] = timeout
        if (json_mode := _flag(mapping, KEY_JSON_MODE)) is not None:
            values["json_mode"] = json_mode
        if (latency := _latency(mapping, KEY_OFFLINE_LATENCY)) is not None:
            values["offline_latency"] = latency
        if allowed := _text(mapping, KEY_ALLOWED_BASE_URLS):
            values["allowed_base_urls"] = tuple(allowed.replace(",", " ").split())
        if (seed := _number(mapping, KEY_OFFLINE_SEED)) is not None:
            if seed != int(seed):
                raise SettingsError(f"{KEY_OFFLINE_SEED} must be an integer.")
            values["offline_seed"] = int(seed)
        try:
            return cls(**values)
        except ValueError as exc:  # pydantic's ValidationError; its text never includes a SecretStr
            raise SettingsError(f"Invalid model settings: {_first_error(exc)}") from None

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


def _text(mapping: Mapping[str, Any], key: str) -> str | None:
    value = mapping.get(key)
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _number(mapping: Mapping[str, Any], key: str) -> float | None:
    value = mapping.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise SettingsError(f"{key} must be a number.")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise SettingsError(f"{key} must be a number, not {str(value)[:40]!r}.") from None


def _flag(mapping: Mapping[str, Any], key: str) -> bool | None:
    value = mapping.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise SettingsError(f"{key} must be true or false, not {str(value)[:40]!r}.")


def _latency(mapping: Mapping[str, Any], key: str) -> tuple[float, float] | None:
    value = mapping.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    pieces: list[Any] = value.replace(";", ",").split(",") if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else [value]
    try:
        numbers = [float(piece) for piece in pieces]
    except (TypeError, ValueError):
        raise SettingsError(f"{key} must be 'min,max' seconds, not {str(value)[:40]!r}.") from None
    if len(numbers) == 1:
        numbers = numbers * 2
    if len(numbers) != 2:
        raise SettingsError(f"{key} must be 'min,max' seconds, not {str(value)[:40]!r}.")
    return numbers[0], numbers[1]


def build_chat_model(settings: ModelSettings) -> ChatModel:
    """The chat model the settings describe: :class:`OfflineChatModel` or :class:`OpenAIChatModel`."""
    if settings.provider == "openai":
        from .openai_model import OpenAIChatModel  # the vendor SDK is imported only when used

        return OpenAIChatModel(settings)
    from .offline import OfflineChatModel

    return OfflineChatModel(latency=settings.offline_latency, seed=settings.offline_seed)


__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_OPENAI_BASE_URL",
    "DEFAULT_TEMPERATURE",
    "DEFAULT_TIMEOUT_S",
    "ModelSettings",
    "PROVIDERS",
    "Provider",
    "SettingsError",
    "build_chat_model",
    "endpoint_key",
]
