"""How likely an editor is to use a suggestion: the score that decides what is posted.

:func:`features` measures a suggestion's fact sentence against its article (what it brings that
the article lacks, how much of an article sentence it repeats, whether it names the subject, its
length, whether its source lost its case and was restored, the passage's score, the other gates'
flags, whether it restates an article sentence with a new figure: an update). :class:`Acceptability` is a logistic model over them, fitted on editors' verdicts (the
store of :mod:`winellbot.bench.verdicts`) by ``winellbot fit acceptability`` and shipped as
``winellbot/data/acceptability.json``: its estimate is the chance that a reviewer finds a new
fact worth adding in the line. :class:`AcceptabilityGate` holds what falls below the threshold
chosen for the share of lines an editor accepts as they stand (on each task's estimates from a
model fitted without that task: :mod:`winellbot.bench.accept_fit`), and gives
every suggestion its estimate (the back-test and the poster take the best first). With no fitted
model, or one fitted on another backend's suggestions, the gate passes everything: nothing is held
on a guess. Figures: docs/results.md, "Verdicts on the posted lines".
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from winellbot.errors import ConfigError
from winellbot.gates.base import REWORD, Gate, needs_rewording
from winellbot.models import Article, GateFinding, Suggestion
from winellbot.pipeline.pagetext import has_capitals
from winellbot.sentences import read
from winellbot.text import content_tokens

MODEL = "data/acceptability.json"
REWORD_FACTOR = 0.5  # a line marked for rewording: its estimate halved, and kept under the bar
FEATURES = ("words", "new_names", "new_figures", "new_words", "stated", "known", "title", "dated", "quoted",
            "restored", "passage", "flags", "figures", "commas", "back", "names_known", "source_title", "update")


def features(article: Article, suggestion: Suggestion) -> dict[str, float]:
    """The measurements the score weighs, by name (:data:`FEATURES`); a model fitted before a
    measurement was added simply does not weigh it."""
    text = suggestion.update.text
    r = read(text, article, parse=False)
    return {
        "words": r.words / 35.0,
        "new_names": min(r.new_names, 5),
        "new_figures": min(r.new_figures, 5),
        "new_words": min(r.new_words, 10),
        "stated": r.stated,
        "known": r.known,
        "title": r.title,
        "dated": float(r.dated),
        "quoted": r.quoted,
        "restored": float(not has_capitals(suggestion.update.document.text)),
        "passage": suggestion.update.score,
        # a mark for rewording is no flag of the kind the verdicts were fitted on (it lowers the estimate instead)
        "flags": float(sum(f.severity == "flag" and f.gate != REWORD for f in suggestion.findings)),
        "figures": float(sum(any(c.isdigit() for c in w) for w in text.split())),
        "commas": float(text.count(",")),
        "back": float(min(r.back, 3)),
        "names_known": r.names_known,
        "source_title": _shared(article.title, suggestion.update.document.title),
        # An article sentence restated with a figure it lacks is an update of that figure (what a
        # post names "May replace"), not a repeat: ``stated`` counts against a repeat, this for an update.
        "update": r.stated * min(r.new_figures, 1),
        # not weighed: marks a line to reword, whose estimate :meth:`Acceptability.estimate` lowers
        "reword": float(needs_rewording(suggestion)),
    }


def _shared(title: str, other: str) -> float:
    """The share of the article title's content words that ``other`` has."""
    mine = set(content_tokens(title))
    return len(mine & set(content_tokens(other))) / len(mine) if mine else 0.0


@dataclass(frozen=True)
class Acceptability:
    """A fitted logistic model: ``estimate`` is its probability, ``threshold`` the bar for posting."""

    names: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    threshold: float
    about: dict

    @classmethod
    def load(cls, path: str | Path | None = None) -> "Acceptability | None":
        """The shipped model (``path`` None) or an operator's; None when the shipped one is absent."""
        source = Path(path) if path else Path(str(resources.files("winellbot").joinpath(MODEL)))
        if not source.exists():
            if path:
                raise ConfigError(f"acceptability model {path} not found")
            return None
        try:
            data = json.loads(source.read_text("utf-8"))
            model = cls(tuple(data["features"]), tuple(data["mean"]), tuple(data["scale"]), tuple(data["coef"]),
                        float(data["intercept"]), float(data["threshold"]), data.get("about", {}))
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"acceptability model {source} is not readable: {exc}") from exc
        unknown = set(model.names) - set(FEATURES)
        if unknown or not (len(model.names) == len(model.mean) == len(model.scale) == len(model.coef)):
            raise ConfigError(f"acceptability model {source} does not fit this version's features")
        return model

    @classmethod
    def for_backend(cls, path: str | Path | None, backend: str) -> "Acceptability | None":
        """The model (as :meth:`load`) when it was fitted on suggestions of ``backend``'s pipeline,
        else None: a model's or the hybrid's sentences are measured differently (no passage score,
        written rather than found) and the score would judge them blind."""
        model = cls.load(path)
        return model if model is not None and model.about.get("backend", "offline") == backend else None

    def estimate(self, values: dict[str, float], *, bar: float | None = None) -> float:
        """The chance an editor uses the line measured by ``values``; for a line marked to reword
        (``values["reword"]``) lowered by :data:`REWORD_FACTOR` and kept under ``bar`` (default: the
        model's threshold), so that it is never posted without a reviewer (a rescore keeps it so)."""
        z = self.intercept + sum(c * (values[n] - m) / (s or 1.0)
                                 for n, m, s, c in zip(self.names, self.mean, self.scale, self.coef))
        p = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
        if values.get("reword"):
            bar = self.threshold if bar is None else bar
            p *= REWORD_FACTOR
            p = min(p, max(0.0, bar - 0.01)) if bar > 0 else p
        return p


class AcceptabilityGate(Gate):
    """Every suggestion gets its estimate (an ``info`` finding with the value); below the model's
    threshold (or ``threshold``, when given) it is held, unless ``holds`` is false: in the reviewed
    mode the estimate orders the review queue and a reviewer decides, so nothing is held on it alone
    (the finding says it is below the bar; a post made without review applies the bar: :meth:`passes`). A
    line marked for rewording (:func:`~winellbot.gates.base.needs_rewording`) gets a lower estimate,
    under the bar."""

    name = "acceptability"

    def __init__(self, model: Acceptability | None = None, *, threshold: float | None = None,
                 holds: bool = True) -> None:
        self.model = model
        self.threshold = threshold if threshold is not None else (model.threshold if model else 0.0)
        self.holds = holds

    def check(self, article: Article, suggestion: Suggestion) -> list[GateFinding]:
        if self.model is None:
            return []
        p = self.model.estimate(features(article, suggestion), bar=self.threshold)
        if p < self.threshold:
            if not self.holds:
                return [GateFinding(self.name, "info", f"estimated chance an editor uses it: {p:.2f}, below the bar "
                                                       f"({self.threshold:.2f}) for posting without review", value=p)]
            return [GateFinding(self.name, "hold", f"an editor would likely not use it: estimate {p:.2f}, "
                                                   f"below {self.threshold:.2f}", value=p)]
        return [GateFinding(self.name, "info", f"estimated chance an editor uses it: {p:.2f}", value=p)]

    def passes(self, estimate: float | None) -> bool:
        """Whether a suggestion with this estimate may be posted without a reviewer (no model: yes)."""
        return self.model is None or estimate is None or estimate >= self.threshold
