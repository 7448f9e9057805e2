"""The provider's API key: read once per request from the variable `[provider] api_key_env`
names, cleaned before it can reach a header, and refused before anything is sent when the
provider could only refuse the request.

Why here and not in the HTTP adapter: a request with no key would still carry the person's
memory (MEMORY.md, facts) to the provider before the 401 came back, and httpx quotes a header it
refuses (`Illegal header value b'Bearer <key>\\r'`) in its exception. Both are settled before a
client exists: the key is trimmed (a CRLF env file leaves a CR) or refused, and a request that
can only be refused is a set-up error.

The rules:
- `api_key_env = ""`: the person said the server needs no key; nothing is read or required.
- a variable other than the default OPENAI_API_KEY, unset or empty: refused (the person named
  it, so a key was meant to be there).
- the default variable unset: refused unless base_url is a loopback address (llama-server,
  Ollama or LM Studio on this machine need no key, as before).
Every key read is remembered by value (memory/secrets/known.py), so the log and every message
mask it whatever its format.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Mapping
from urllib.parse import urlsplit

from lecode_ls.config import ProviderSettings
from lecode_ls.errors import ProviderKeyInvalid, ProviderKeyMissing
from lecode_ls.memory.secrets import remember_secret_value

log = logging.getLogger(__name__)

DEFAULT_KEY_VARIABLE = ProviderSettings.model_fields["api_key_env"].default
"""OPENAI_API_KEY: the variable read when the person named none."""

_warned: set[str] = set()  # variables whose trimmed key was already reported


def is_loopback_url(base_url: str) -> bool:
    """Whether `base_url`'s host is this machine: localhost (or a name under .localhost) or a
    loopback IP address. A name that merely resolves to one is not trusted to."""
    try:
        host = urlsplit(base_url).hostname or ""
    except ValueError:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def provider_key(settings: ProviderSettings, environ: Mapping[str, str]) -> str | None:
    """The key to send to `settings.base_url`, or None when none is needed.

    Raises ProviderKeyMissing or ProviderKeyInvalid (naming the variable, never the key) when a
    request could only be refused, before anything is sent. Editors add how to set a key
    (VS Code: "lecode: Set API Key"), as for `provider_auth`."""
    variable = settings.api_key_env
    if not variable:
        return None
    raw = environ.get(variable)
    key = _clean(variable, raw) if raw else None
    if key is not None:
        return key
    if variable != DEFAULT_KEY_VARIABLE:
        raise ProviderKeyMissing(
            f"[provider] api_key_env names {variable}, which is not set (or is empty) in "
            "lecode-ls's environment, so nothing was sent: set it where lecode-ls is started, "
            'or set api_key_env to "" if the server needs no key'
        )
    if settings.base_url is not None and not is_loopback_url(settings.base_url):
        raise ProviderKeyMissing(
            f"no API key is set ({variable} is not set or is empty) and {_host(settings.base_url)} "
            "is not a server on this machine, so nothing was sent: set "
            f'{variable} where lecode-ls is started, or set [provider] api_key_env to "" '
            "if that server needs no key"
        )
    return None


def _clean(variable: str, raw: str) -> str | None:
    """The key without the whitespace around it; None if nothing is left. A key with a
    character inside that a header cannot carry is refused, and is never quoted."""
    remember_secret_value(raw)  # masked from now on, however a message might carry it
    key = raw.strip()
    if not key:
        return None
    if not all("\x21" <= char <= "\x7e" for char in key):
        raise ProviderKeyInvalid(
            f"the API key in {variable} holds a character an HTTP header cannot carry (a "
            "control character, a space or a non-ASCII character), so nothing was sent; set "
            "the key again"
        )
    if key != raw and variable not in _warned:
        _warned.add(variable)
        log.warning(
            "the API key in %s had spaces or line breaks around it (a CRLF env file?); they "
            "were removed",
            variable,
        )
    return key


def _host(base_url: str) -> str:
    """base_url's host alone (a URL may carry credentials, which no message quotes)."""
    try:
        return urlsplit(base_url).hostname or "base_url"
    except ValueError:
        return "base_url"
