"""Hybrid mode: the offline pipeline finds and places passages, the model reads only those.

    offline pass (no model)   search, read, passages about the subject the article lacks, placed
    HybridNavigator           the documents of those passages, best first, are the first candidates;
                              then, for ``model_rounds`` more rounds (none by default), the LLM
                              Navigator searches
    HybridExtractor           the model sees the offline passages of every lead at once (with their
                              placement and source) in one call, instead of whole pages: the best
                              passages first (at most ``per_lead`` of a lead), as many as fit whole
                              in the prompt's budget; a document with no passage costs no call
    criteria, aggregator, editor: the LLM agent's

So the model reads a few passages per source instead of whole pages and writes no query for the
sources the offline pass already found. Everything the model says is checked as in the agent (the
quote must be in the document, the section must exist).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from winellbot.config import PipelineSettings
from winellbot.interface import Extractor, Fetcher, Memory, Navigator, SearchBackend
from winellbot.llm.client import ModelClient
from winellbot.models import Article, Document, NavigationStep, PipelineResult, SearchResult, SectionCriteria, Update
from winellbot.pipeline.agent import AgentPipeline, build_agent_pipeline
from winellbot.pipeline.agent_common import section_name
from winellbot.pipeline.agent_extract import LLMExtractor
from winellbot.pipeline.agent_navigate import LLMNavigator
from winellbot.pipeline.offline.build import build_offline_pipeline
from winellbot.pipeline.offline.extractor import OfflineExtractor
from winellbot.pipeline.pipeline import Pipeline


@dataclass
class Leads:
    """What the offline pass found for the article being treated: documents best first, and their passages."""

    results: list[SearchResult] = field(default_factory=list)
    passages: dict[str, list[Update]] = field(default_factory=dict)  # by document URL
    read: bool = False  # the leads' passages went to the model (in one call)

    def fill(self, kept: tuple[Update, ...], limit: int) -> None:
        by_url: dict[str, list[Update]] = {}
        for update in sorted(kept, key=lambda u: -u.score):
            by_url.setdefault(update.document.url, []).append(update)
        self.passages = dict(list(by_url.items())[:limit])
        self.results = [_result(updates[0].document) for updates in self.passages.values()]
        self.read = False


def _result(doc: Document) -> SearchResult:
    return SearchResult(url=doc.url, title=doc.title, snippet=doc.text[:300], published=doc.published,
                        backend="offline pass", document=doc)


class HybridNavigator(Navigator):
    """The offline pass's documents first (no model), then ``model_rounds`` of the LLM Navigator."""

    def __init__(self, leads: Leads, navigator: LLMNavigator, *, model_rounds: int = 1) -> None:
        self.leads = leads
        self.navigator = navigator
        self.model_rounds = model_rounds

    def navigate(self, article: Article, criteria: SectionCriteria, memory: Memory,
                 search: SearchBackend) -> NavigationStep:
        """The next unread lead; when none is left, the model's query (while rounds remain)."""
        for result in self.leads.results:
            if result.url not in memory.read_urls:
                n = len(self.leads.passages.get(result.url, ()))
                return NavigationStep(f"(offline pass) {article.title}", result,
                                      f"the offline pass found {n} passage(s) the article lacks")
        model_queries = sum(1 for q in memory.queries if not q.startswith("(offline pass)"))
        if model_queries >= self.model_rounds:
            return NavigationStep("", None, "the offline pass's documents are read; no model round left")
        return self.navigator.navigate(article, criteria, memory, search)


class HybridExtractor(Extractor):
    """The model extracts from the offline passages, not from whole pages.

    The first lead read brings the passages of every lead in one request (a prompt's fixed part
    costs more than a document's passages); the other leads then cost nothing. A document the
    model's own search found is shown its own passages.
    """

    def __init__(self, leads: Leads, extractor: LLMExtractor, offline: OfflineExtractor | None = None, *,
                 per_lead: int = 3) -> None:
        self.leads = leads
        self.extractor = extractor
        self.offline = offline or OfflineExtractor()
        # a reply holds three updates: more than a few passages of one page mostly repeat its story
        self.per_lead = per_lead

    def extract(self, article: Article, criteria: SectionCriteria, document: Document) -> list[Update]:
        """Updates from the passages of ``document``; [] without a model call when it has none."""
        if document.url in self.leads.passages:
            if self.leads.read:
                return []  # its passages went with the first lead's request
            self.leads.read = True
            passages = [p for ps in self.leads.passages.values() for p in ps[: self.per_lead]]
        else:  # a document the model's own search found
            passages = self.offline.extract(article, criteria, document)[: self.per_lead]
        if not passages:
            return []
        passages.sort(key=lambda p: -p.score)  # the extractor packs them whole, best first, up to its budget
        blocks = [f"[Passage {i} from \"{p.document.title}\", placed under: {section_name(p.section_path)}]\n"
                  f"{p.quote}" for i, p in enumerate(passages, 1)]
        sources = tuple({p.document.url: p.document for p in passages}.values())
        return self.extractor.extract_from(article, criteria, document, blocks, sources=sources)


@dataclass
class HybridPipeline(AgentPipeline):
    """The agent, with an offline pass first whose passages lead the navigator and feed the extractor."""

    offline: Pipeline | None = None
    leads: Leads = field(default_factory=Leads)
    max_leads: int = 5

    def propose(self, article: Article, search: SearchBackend, fetcher: Fetcher | None = None, *,
                since: str | None = None) -> PipelineResult:
        """The offline pass, then the agent on its leads (see the module's docstring)."""
        self.leads.fill((), 0)
        if self.offline is not None:
            criteria = self.offline.inducer.induce(article)
            first = self.offline.loop.run(article, criteria, search, fetcher)
            self.leads.fill(first.kept, self.max_leads)
        return super().propose(article, search, fetcher, since=since)


def build_hybrid_pipeline(client: ModelClient, *, max_leads: int = 5, model_rounds: int = 0,
                          offline_max_iterations: int = PipelineSettings().offline_max_iterations,
                          offline_max_empty: int = PipelineSettings().offline_max_empty,
                          **agent_settings) -> HybridPipeline:
    """The hybrid pipeline on ``client``; ``agent_settings`` as for :func:`build_agent_pipeline`.

    The offline pass runs with the offline backend's own loop bounds.
    """
    agent = build_agent_pipeline(client, **agent_settings)
    leads = Leads()
    navigator, extractor = agent.loop.navigator, agent.loop.extractor
    agent.loop.navigator = HybridNavigator(leads, navigator, model_rounds=model_rounds)
    agent.loop.extractor = HybridExtractor(leads, extractor)
    # every lead gets its turn: a lead whose passages the model finds nothing in is not a dead end
    agent.loop.max_iterations = max(agent.loop.max_iterations, max_leads + model_rounds)
    agent.loop.max_empty = max(agent.loop.max_empty, max_leads + model_rounds)
    offline = build_offline_pipeline(max_suggestions=agent.max_suggestions, max_iterations=offline_max_iterations,
                                     max_empty=offline_max_empty)
    return HybridPipeline(inducer=agent.inducer, loop=agent.loop, editor=agent.editor,
                          max_suggestions=agent.max_suggestions, journal=agent.journal, dated=agent.dated,
                          offline=offline, leads=leads, max_leads=max_leads)
