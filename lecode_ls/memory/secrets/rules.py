"""Which strings are secrets: the rule set, compiled for RE2.

The rules come from Yelp's detect-secrets (Apache-2.0), read from its plugin classes at run time
(`denylist`), so an upgrade of the package brings its new and fixed patterns. Only its pattern
plugins that name a credential format are taken; its entropy and keyword plugins, and the
formats whose patterns hit ordinary code (Twilio's `AC` + 32 letters, Mailchimp, Telegram,
Artifactory, public IPs) are not: a coding memory is full of hashes and identifiers, and a
false positive destroys evidence. The patterns are matched with RE2, never with Python's `re`:
linear time on any text. Two rewrites make them RE2's: a trailing `(?!\\w)` becomes a check of
the character after the match, and a counted repeat past RE2's 1000 is capped at 1000.

detect-secrets has no pattern yet for some formats a coding memory meets; those are the `EXTRA`
rules below, each named for the format its vendor documents (GitHub fine-grained tokens,
OpenAI project and service keys, Anthropic keys, Google API keys, npm tokens, whole PEM and
OpenSSH private key blocks).

A rule has literal `keywords`: it is run only on a text that contains one of them (lower-cased),
so a 1 MiB result with none costs one pass per keyword, not one per pattern.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import re2

MAX_PROGRAM_BYTES = 8 << 20
"""RE2's memory for one compiled rule (as for search patterns, notes/pattern.py)."""


@dataclass(frozen=True)
class Rule:
    kind: str
    """What the marker says the secret was: `github-token`, `aws-access-key`..."""
    regex: re2._Regexp[bytes]
    """Compiled as bytes and run on the UTF-8 text: the bindings re-encode a `str` at every
    call, which cost a 1 MiB text 15 ms a rule."""
    keywords: tuple[str, ...]
    """Lower-case literals one of which every match contains; () runs the rule on every text."""
    group: int = 0
    """The capture group that is the secret (BasicAuth's password, not the whole URL)."""
    word_end: bool = False
    """The character after the match must not be a word character (the `(?!\\w)` of the source)."""
    check: Callable[[str], bool] | None = None
    """A further test of the found value (a JWT's header must decode to JSON)."""


def _options(capture: bool = True) -> Any:
    import re2

    options = re2.Options()
    options.max_mem = MAX_PROGRAM_BYTES
    options.log_errors = False
    options.never_capture = not capture
    return options


def compile_rule(pattern: str, flags: int = 0) -> re2._Regexp[bytes]:
    """Compile one pattern under RE2 with the rules' bounds; raises re2.error."""
    import re2

    prefix = "(?i)" if flags & re.IGNORECASE else ""
    return re2.compile((prefix + pattern).encode("utf-8"), _options())


_REPEAT = re.compile(r"\{(\d+),(\d{4,})\}")


def _for_re2(pattern: str) -> tuple[str, bool]:
    word_end = pattern.endswith(r"(?!\w)")
    if word_end:
        pattern = pattern[: -len(r"(?!\w)")]
    pattern = _REPEAT.sub(lambda m: f"{{{m.group(1)},{min(1000, int(m.group(2)))}}}", pattern)
    return pattern, word_end


def _jwt(value: str) -> bool:
    head = value.split(".", 1)[0]
    try:
        decoded = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    return isinstance(decoded, dict)


def _not_hex(value: str) -> bool:
    """A 40-character Git hash in quotes after `aws...key` is still a hash."""
    return not re.fullmatch(r"[0-9a-fA-F]+", value)


# The detect-secrets plugins taken: (module, class, kind, keywords of each of its patterns).
_PLUGINS: tuple[tuple[str, str, str, tuple[tuple[str, ...], ...]], ...] = (
    (
        "aws",
        "AWSKeyDetector",
        "aws-access-key",
        (("a3t", "abia", "acca", "akia", "asia"), ("aws",)),
    ),
    (
        "github_token",
        "GitHubTokenDetector",
        "github-token",
        (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),),
    ),
    (
        "gitlab_token",
        "GitLabTokenDetector",
        "gitlab-token",
        (
            ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-"),
            ("gr1348941",),
            ("glcbt-",),
            ("glimt-",),
            ("glptt-",),
            ("glagent-",),
            ("gloas-",),
        ),
    ),
    ("slack", "SlackDetector", "slack-token", (("xox",), ("hooks.slack.com",))),
    ("stripe", "StripeDetector", "stripe-key", (("k_live_",),)),
    ("jwt", "JwtTokenDetector", "jwt", (("eyj",),)),
    ("npm", "NpmDetector", "npm-token", ((":_authtoken",),)),
    ("pypi_token", "PypiTokenDetector", "pypi-token", (("pypi-",), ("pypi-",))),
    ("basic_auth", "BasicAuthDetector", "url-password", (("://",),)),
    ("openai", "OpenAIDetector", "openai-key", (("t3blbkfj",),)),
    ("sendgrid", "SendGridDetector", "sendgrid-key", (("sg.",),)),
    ("square_oauth", "SquareOAuthDetector", "square-secret", (("sq0csp-",),)),
    ("azure_storage_key", "AzureStorageKeyDetector", "azure-storage-key", (("accountkey=",),)),
)

# What detect-secrets has no pattern for (see the module's docstring).
_EXTRA: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    # detect-secrets' JWT pattern ends lazily, so it stops before the signature: the whole token.
    ("jwt", r"eyJ[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]*", ("eyj",)),
    ("github-token", r"github_pat_[A-Za-z0-9_]{82}", ("github_pat_",)),
    (
        "openai-key",
        r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,}",
        ("sk-proj-", "sk-svcacct-", "sk-admin-"),
    ),
    ("anthropic-key", r"sk-ant-(?:api|admin|oat)\d\d-[A-Za-z0-9_\-]{80,}", ("sk-ant-",)),
    ("google-api-key", r"AIza[0-9A-Za-z_\-]{35}", ("aiza",)),
    ("npm-token", r"npm_[A-Za-z0-9]{36}", ("npm_",)),
    ("stripe-key", r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{24,}", ("k_live_", "k_test_")),
    (
        "private-key",
        # The whole block: header, body (its `Proc-Type:`/`DEK-Info:` lines too) and footer;
        # the body's line breaks and slashes may be escaped (`\n`, `\\n`, `\/`: the block
        # inside a JSON string, once or twice encoded, as a raw read of a file meets it).
        r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[A-Za-z0-9+/=\s:,.]|-[A-Za-z0-9]|\\+[nrt/])*"
        r"(?:-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----)?",
        ("private key",),
    ),
    (
        "private-key",
        r"PuTTY-User-Key-File-[23]:[^\n]*(?:\n[A-Za-z0-9+/=:\- ]+)*",
        ("putty-user-key-file",),
    ),
)

_CHECKS: dict[str, Callable[[str], bool]] = {"jwt": _jwt}


def _plugin_rules() -> list[Rule]:
    import importlib

    rules = []
    for module_name, class_name, kind, keywords in _PLUGINS:
        plugin = getattr(
            importlib.import_module(f"detect_secrets.plugins.{module_name}"), class_name
        )
        patterns = list(getattr(plugin, "denylist", ()))
        for index, compiled in enumerate(patterns):
            pattern, word_end = _for_re2(compiled.pattern)
            if class_name == "PrivateKeyDetector":
                continue  # its header-only patterns: the EXTRA rule takes the whole block
            words = keywords[min(index, len(keywords) - 1)]
            regex = compile_rule(pattern, compiled.flags)
            group = (
                1
                if regex.groups
                and class_name in ("AWSKeyDetector", "BasicAuthDetector", "NpmDetector")
                else 0
            )
            check = _CHECKS.get(kind) or (
                _not_hex if class_name == "AWSKeyDetector" and group else None
            )
            rules.append(Rule(kind, regex, tuple(w for w in words if w), group, word_end, check))
    return rules


class RuleSet:
    """Rules and one RE2 set of all their keywords: one linear pass over a text says which
    rules can match it."""

    def __init__(self, rules: list[Rule]) -> None:
        import re2

        self.rules = rules
        self.always = [rule for rule in rules if not rule.keywords]
        self._owners: list[list[Rule]] = []
        words: dict[str, int] = {}
        for rule in rules:
            for word in rule.keywords:
                if word not in words:
                    words[word] = len(self._owners)
                    self._owners.append([])
                self._owners[words[word]].append(rule)
        self._set = re2.Set.SearchSet(_options(capture=False))
        for word in words:
            self._set.Add(("(?i)" + re2.escape(word)).encode("utf-8"))
        self._set.Compile()

    def candidates(self, text: bytes) -> list[Rule]:
        """The rules to run on `text` (UTF-8), in the rule set's order."""
        matched = self._set.Match(text)  # a list of indices, or None
        indices: list[int] = matched if isinstance(matched, list) else []
        hit = {id(rule) for index in indices for rule in self._owners[index]}
        return [rule for rule in self.rules if not rule.keywords or id(rule) in hit]


_RULES: RuleSet | None = None


def builtin_rules() -> RuleSet:
    """The rule set, compiled once (importing detect-secrets takes about half a second, so this
    waits for the first text to check)."""
    global _RULES
    if _RULES is None:
        extra = [
            Rule(kind, compile_rule(p), words, check=_CHECKS.get(kind)) for kind, p, words in _EXTRA
        ]
        _RULES = RuleSet(_plugin_rules() + extra)
    return _RULES
