"""Source reliability: refuse sources from a maintained list of domains.

The list (``winellbot/data/domains.toml``, merged with an operator's file) puts
domains in categories such as *deprecated*, *generally unreliable*,
*user-generated* and *Wikipedia and its mirrors*, each with a severity and each
domain with a reason. A rule matches the source's host itself or any host that
ends in ``"." + rule``, so only whole labels count: ``news.bbc.co.uk`` matches
a ``bbc.co.uk`` rule, ``bbc.co.uk.example.net`` and ``notbbc.co.uk`` do not.
Nothing is ever matched by substring. Unknown domains are allowed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

from winellbot.errors import ConfigError
from winellbot.gates.base import SEVERITIES, Gate, read_gate_data
from winellbot.models import Article, GateFinding, Suggestion
from winellbot.search.filters import registered_domain

_HOST = re.compile(r"[\w-]+(?:\.[\w-]+)*")


@dataclass(frozen=True)
class DomainRule:
    """One listed domain: its category, what that costs, and why it is listed."""

    domain: str
    category: str
    severity: str  # a gate severity, or "none" for an allowed domain
    description: str
    reason: str


def _rules_from(data: dict, categories: dict[str, dict]) -> dict[str, DomainRule]:
    rules = {}
    for category, spec in data.items():
        if not isinstance(spec, dict):
            raise ConfigError(f"domain list: {category!r} must be a table")
        merged = {**categories.get(category, {}), **{k: v for k, v in spec.items() if k != "domains"}}
        categories[category] = merged
        severity = merged.get("severity", "hold")
        if severity != "none" and severity not in SEVERITIES:
            raise ConfigError(f"domain list: unknown severity {severity!r} for {category!r}")
        for domain, reason in spec.get("domains", {}).items():
            domain = domain.strip().lower().rstrip(".")
            rules[domain] = DomainRule(domain, category, severity, merged.get("description", category), str(reason))
    return rules


@lru_cache(maxsize=8)
def load_domain_rules(extra_path: str | None = None) -> dict[str, DomainRule]:
    """The shipped rules with an operator's file merged over them, keyed by domain."""
    categories: dict[str, dict] = {}
    rules = _rules_from(read_gate_data("domains.toml", None, "domain list"), categories)
    if extra_path:
        rules.update(_rules_from(read_gate_data("domains.toml", extra_path, "domain list"), categories))
    return rules


def host_of(url: str) -> str:
    """The URL's host in lower case without a trailing dot ("" when there is none)."""
    try:
        host = urlsplit(url if "//" in url else "//" + url).hostname or ""
    except ValueError:
        return ""
    host = host.rstrip(".").lower()
    return host if _HOST.fullmatch(host) else ""


class DomainList:
    """Looks a URL up in the rules: the longest matching rule wins."""

    def __init__(self, rules: dict[str, DomainRule]) -> None:
        self.exact = {d: r for d, r in rules.items() if not d.endswith(".*")}
        self.any_suffix = {d[:-2]: r for d, r in rules.items() if d.endswith(".*")}

    def lookup(self, url: str) -> DomainRule | None:
        host = host_of(url)
        if not host:
            return None
        labels = host.split(".")
        for i in range(len(labels)):  # most specific first: a.b.example.com, b.example.com, ...
            rule = self.exact.get(".".join(labels[i:]))
            if rule is not None:
                return rule
        if self.any_suffix:
            name = registered_domain(url).split(".")[0]
            return self.any_suffix.get(name)
        return None


class SourcesGate(Gate):
    """Refuses a suggestion whose source (or cited URL) is on the domain list, saying why."""

    name = "sources"

    def __init__(self, *, extra_path: str | Path | None = None, rules: dict[str, DomainRule] | None = None) -> None:
        self.domains = DomainList(rules if rules is not None else load_domain_rules(
            str(extra_path) if extra_path else None))

    def check(self, article: Article, suggestion: Suggestion) -> list[GateFinding]:
        urls = dict.fromkeys(u for u in (suggestion.update.document.url, suggestion.edit.citation.url) if u)
        findings = []
        for url in urls:
            if not host_of(url):
                findings.append(self.finding("hold", f"cannot tell the source's domain from {url!r}"))
                continue
            rule = self.domains.lookup(url)
            if rule is None or rule.severity == "none":
                continue
            findings.append(self.finding(rule.severity, f"{host_of(url)} is {rule.description}: {rule.reason} "
                                                        f"(listed as {rule.domain})"))
        return findings
