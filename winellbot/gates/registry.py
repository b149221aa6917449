"""The gate registry: :func:`default_gates` builds the standard chain from the gate modules.

Only the factory, the back-test and tests import it; the gate modules import :mod:`winellbot.gates.base`.
"""
from __future__ import annotations

from pathlib import Path

from winellbot.gates.acceptability import Acceptability, AcceptabilityGate
from winellbot.gates.base import Gate, GateChain
from winellbot.gates.copying import CopyingGate
from winellbot.gates.duplicates import DuplicatesGate
from winellbot.gates.editorial import ClarityGate, FurnitureGate, NoveltyGate, PrimaryGate, ToneGate
from winellbot.gates.hostile import HostileGate
from winellbot.gates.judge import SupportJudge
from winellbot.gates.language import LanguageGate
from winellbot.gates.sources import SourcesGate
from winellbot.gates.style import StyleGate
from winellbot.gates.subject import SubjectGate
from winellbot.gates.support import SupportGate


def default_gates(
    *,
    state=None,
    client=None,
    domains_path: str | Path | None = None,
    words_path: str | Path | None = None,
    judge_model: str = "",
    language: str = "en",
    acceptability_path: str | Path | None = None,
    acceptability_threshold: float | None = None,
    backend: str = "offline",
    acceptability_holds: bool = True,
    reword: bool = False,
) -> GateChain:
    """The standard chain: sources, hostile, language, the editorial gates (clarity, furniture, tone,
    primary, novelty), subject, support, copying, style, duplicates, acceptability (+ the judge with a
    client).

    ``state`` (a :class:`winellbot.state.db.State`) lets the duplicate gate see
    earlier suggestions; ``client`` (a :class:`winellbot.llm.client.ModelClient`)
    adds the model judge of source support; ``domains_path`` and ``words_path``
    name TOML files that add to or override the shipped domain and word lists; ``language`` is the
    wiki's (ISO 639-1): text in another is held; ``acceptability_path`` an operator's fitted
    acceptability model instead of the shipped one, ``acceptability_threshold`` a bar instead of the model's;
    ``backend`` the pipeline's (the score weighs only suggestions of the backend it was fitted on);
    ``acceptability_holds`` false: the score holds nothing on its own (the reviewed mode: it orders the queue);
    ``reword`` (the reviewed mode): a line held only for its wording is flagged for a reviewer to reword
    (:mod:`winellbot.gates.editorial`).
    """
    gates: list[Gate] = [
        SourcesGate(extra_path=domains_path),
        HostileGate(state=state),
        LanguageGate(language),
        ClarityGate(reword=reword),
        FurnitureGate(),
        ToneGate(reword=reword),
        PrimaryGate(),
        NoveltyGate(),
        SubjectGate(),
        SupportGate(),
        CopyingGate(),
        StyleGate(extra_path=words_path),
        DuplicatesGate(state=state),
        AcceptabilityGate(Acceptability.for_backend(acceptability_path, backend), threshold=acceptability_threshold,
                          holds=acceptability_holds),
    ]
    if client is not None:
        at = next(i for i, g in enumerate(gates) if isinstance(g, SupportGate)) + 1
        gates.insert(at, SupportJudge(client, model=judge_model))
    return GateChain(gates)
