"""The WINELL agent: every stage asks a model through one :class:`ModelClient`.

    LLMCriteria   (stage 1)   article with headings marked -> per-section criteria
    LLMNavigator  (stage 2)   criteria + memory -> query -> search -> result to read
    LLMExtractor  (stage 2)   <document> data -> updates (section, quote, event date), checked in code
    LLMAggregator (stage 2)   ignore / add / replace against the section and the kept updates
    LLMEditor     (stage 3)   paragraph + update -> minimal change; the citation is built by code

The stages live in ``agent_navigate``, ``agent_extract`` and ``agent_edit``; this module wires them
into a :class:`Pipeline`. A stage that fails (a malformed reply after the client's retries, a backend
error) falls back or skips that item, and the error goes into the page's result; the run goes on.
A spent token budget is different: :class:`BudgetExceeded` leaves the pipeline, and the bot ends
its cycle without counting the page as checked.

Before any model call the pipeline asks the search for the subject's title: when nothing was
published since the page's last check, there is nothing for a model to read, and the page costs no
token at all.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from winellbot.config import PipelineSettings
from winellbot.errors import SearchError
from winellbot.interface import Fetcher, SearchBackend
from winellbot.llm.client import ModelClient
from winellbot.models import Article, NavigationStep, PipelineResult
from winellbot.pipeline.agent_common import Journal
from winellbot.pipeline.agent_edit import LLMEditor
from winellbot.pipeline.agent_extract import LLMAggregator, LLMExtractor
from winellbot.pipeline.agent_navigate import LLMCriteria, LLMNavigator
from winellbot.pipeline.loop import UpdateAggregationLoop
from winellbot.pipeline.pipeline import Pipeline

__all__ = ["AgentPipeline", "LLMAggregator", "LLMCriteria", "LLMEditor", "LLMExtractor", "LLMNavigator",
           "build_agent_pipeline", "STAGES"]

STAGES = ("criteria", "navigator", "extractor", "aggregator", "editor")


@dataclass
class AgentPipeline(Pipeline):
    """A :class:`Pipeline` whose result also carries the errors its stages worked around.

    ``dated`` are the stages that honour ``since`` (the navigator's searches, the extractor's
    event dates); :meth:`propose` gives them the page's own date.
    """

    journal: Journal = field(default_factory=Journal)
    dated: list = field(default_factory=list)

    def propose(self, article: Article, search: SearchBackend, fetcher: Fetcher | None = None, *,
                since: str | None = None) -> PipelineResult:
        """Run the three stages for ``article``; stage errors are in ``result.errors``.

        ``since`` (ISO date, the page's last check) limits sources and events to newer ones.
        """
        self.journal.drain()
        for stage in self.dated:
            stage.since = since
        if since and not has_sources(article, search, since):
            step = NavigationStep(article.title, None, f"nothing published since {since}: no model was asked")
            return PipelineResult(suggestions=(), steps=(step,))
        result = super().propose(article, search, fetcher, since=since)
        return replace(result, errors=result.errors + self.journal.drain())


def has_sources(article: Article, search: SearchBackend, since: str) -> bool:
    """Whether a search for the subject finds anything published since ``since`` (a failed search: yes)."""
    try:
        return bool(search.search(article.title, since=since, limit=1))
    except SearchError:
        return True  # let the navigator meet the failure and record it


def build_agent_pipeline(
    client: ModelClient,
    *,
    stage_models: dict[str, str] | None = None,
    max_iterations: int = PipelineSettings().max_iterations,
    max_empty: int = PipelineSettings().max_empty,
    max_suggestions: int = PipelineSettings().max_suggestions,
    editor_client: ModelClient | None = None,
    offline_fallback: bool = True,
    since: str | None = None,
) -> AgentPipeline:
    """The agent's pipeline on ``client``; ``stage_models`` names a model per stage (see STAGES).

    ``editor_client`` runs the editor elsewhere (a local fine-tuned model). ``since`` (ISO date)
    limits sources and events to those after the article's last check. ``offline_fallback`` keeps
    the navigator's no-model fallbacks (a query from the title and a section name, the top result);
    without them a failed navigator ends the loop. Criteria always fall back to section names and
    the editor to appending the update, since neither can skip its item.
    """
    models = dict(stage_models or {})
    journal = Journal()
    criteria = LLMCriteria(client, model=models.get("criteria", ""), journal=journal)
    navigator = LLMNavigator(client, model=models.get("navigator", ""), journal=journal, since=since,
                             fallback=offline_fallback)
    extractor = LLMExtractor(client, model=models.get("extractor", ""), journal=journal, since=since)
    aggregator = LLMAggregator(client, model=models.get("aggregator", ""), journal=journal,
                               criteria_for=criteria.known)
    editor = LLMEditor(editor_client or client, model=models.get("editor", ""), journal=journal)
    loop = UpdateAggregationLoop(navigator, extractor, aggregator, max_iterations=max_iterations,
                                 max_empty=max_empty)
    return AgentPipeline(inducer=criteria, loop=loop, editor=editor, max_suggestions=max_suggestions,
                         journal=journal, dated=[navigator, extractor])
