"""Builds the bot's collaborators from :class:`winellbot.config.Settings`.

The one place where configuration meets code: every other module takes plain
keyword arguments. Only the commands and the back-test import it. Heavy libraries (torch,
transformers, spaCy) load inside the modules that use them, when first used.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from winellbot.bundled import sample_dir
from winellbot.config import Settings
from winellbot.editor.predict import editor_model, local_client
from winellbot.editor.spans import copy_decoding
from winellbot.errors import ConfigError, StorageError
from winellbot.gates.registry import default_gates
from winellbot.gates.revision import RevisionCheck
from winellbot.interface import Fetcher, SearchBackend
from winellbot.llm.client import ModelClient
from winellbot.llm.local_server import local_backend
from winellbot.llm.offline import get_backend
from winellbot.meaning import MINILM, Embedder, EmbeddingCache
from winellbot.pipeline.agent import build_agent_pipeline
from winellbot.pipeline.agent_hybrid import build_hybrid_pipeline
from winellbot.pipeline.local_edit import LocalEditor
from winellbot.pipeline.offline.build import build_offline_pipeline
from winellbot.pipeline.offline.editor import OfflineEditor
from winellbot.pipeline.placement import fitted_model
from winellbot.search._web import user_agent
from winellbot.search.backends import get_search_backend
from winellbot.search.corpus import LocalCorpus
from winellbot.search.fetch import WebFetcher
from winellbot.state.db import State
from winellbot.wiki import site as wiki_site
from winellbot.wiki.reader import WikiReader
from winellbot.wiki.site import user_page_url

# The pipeline proposes this many times the suggestions wanted, so that the ones a gate
# stops leave room for the next best (see pipeline.propose_checked).
CANDIDATES = 2


def web_user_agent(site=None, username: str | None = None) -> str:
    """The User-Agent of the bot's news searches and fetches: it names the bot's user page, as the
    wiki's own requests do, so a publisher who sees the bot in its logs can reach the operator."""
    if site is None:
        return user_agent()

    return user_agent(user_page_url(site, site.username() or username))


def build_search(settings: Settings, user_agent: str | None = None) -> SearchBackend:
    s = settings.search
    if s.backend == "corpus":
        corpus = LocalCorpus()
        if s.corpus_dir:
            corpus.load_dir(s.corpus_dir)
        else:
            lines = (sample_dir() / "news.jsonl").read_text(encoding="utf-8").splitlines()
            corpus.add(json.loads(line) for line in lines if line.strip())
        return corpus

    kwargs: dict = {"deadline": s.deadline}
    if s.base_url:
        kwargs["base_url"] = s.base_url
    key = os.environ.get(s.api_key_env, "")
    if key:
        kwargs["api_key"] = key
    if user_agent:
        kwargs["user_agent"] = user_agent
    return get_search_backend(s.backend, **kwargs)


def build_fetcher(settings: Settings, state: State | None, user_agent: str | None = None) -> Fetcher | None:
    if settings.search.backend == "corpus":
        return None  # corpus results carry their documents

    return WebFetcher(state=state, allow_private=settings.search.allow_private_urls,
                      user_agent=user_agent or web_user_agent(), total_timeout=settings.search.deadline)


def build_client(settings: Settings, state: State | None, run_id: int | None):

    s = settings.llm
    if s.backend == "local":
        backend = local_backend(settings)
    elif s.backend == "openai":
        if not s.api_key and "api.openai.com" in s.base_url:
            raise ConfigError("the openai backend needs WINELLBOT_OPENAI_API_KEY (or OPENAI_API_KEY)")
        backend = get_backend("openai", base_url=s.base_url, api_key=s.api_key or "none", model=s.model,
                              timeout=s.timeout, max_retries=s.max_retries, response_format=s.response_format)
    else:
        raise ConfigError(f"unknown llm.backend {s.backend!r} (openai | local)")
    return ModelClient(backend, state=state, run_id=run_id, token_budget=s.token_budget)


def build_pipeline(settings: Settings, *, state: State | None = None, run_id: int | None = None,
                   client=None, editor_client=None):
    """The configured pipeline; ``client``/``editor_client`` reuse model clients built by the caller.

    Passing the clients in lets the caller share them with the gates (the support judge) and
    tell them the run id once the run has started.
    """
    p = settings.pipeline
    if p.backend == "offline":
        pipeline = build_offline_pipeline(max_suggestions=CANDIDATES * p.max_suggestions,
                                          max_iterations=p.offline_max_iterations, max_empty=p.offline_max_empty,
                                          embedder=build_embedder(settings),
                                          placement_embedder=build_embedder(settings, placement=True))
        if settings.llm.editor_backend == "local":
            pipeline.editor = build_local_editor(settings, state, run_id)
        return pipeline
    if p.backend in ("openai", "hybrid"):

        client = client or build_client(settings, state, run_id)
        editor_client = editor_client or build_editor_client(settings, state, run_id)
        build, extra = build_agent_pipeline, {}
        if p.backend == "hybrid":
            build, extra = build_hybrid_pipeline, {"offline_max_iterations": p.offline_max_iterations,
                                                   "offline_max_empty": p.offline_max_empty}
        pipeline = build(client, stage_models=settings.llm.stage_models, max_iterations=p.max_iterations,
                         max_empty=p.max_empty, max_suggestions=CANDIDATES * p.max_suggestions,
                         editor_client=editor_client, **extra)
        editor = settings.llm.editor_backend
        if editor == "offline":  # the agent finds and places updates; code appends them

            pipeline.editor = OfflineEditor()
        elif editor == "local":
            pipeline.editor = build_local_editor(settings, state, run_id)
        elif editor not in ("llm", "transformers"):
            raise ConfigError(f"unknown llm.editor_backend {editor!r} (llm | transformers | local | offline)")
        return pipeline
    raise ConfigError(f"unknown pipeline backend {p.backend!r} (offline | openai | hybrid)")


def build_embedder(settings: Settings, *, placement: bool = False):
    """A sentence embedder of the offline pipeline, with its cache file (the model loads on first use):
    all-MiniLM-L6-v2, or with ``placement`` the model the placement weights were fitted with."""

    p = settings.pipeline
    return Embedder(EmbeddingCache(p.embedding_cache_path(settings.state.path)),
                    model=fitted_model() if placement else MINILM, threads=p.model_threads)


def build_model_clients(settings: Settings, state: State | None, run_id: int | None = None) -> tuple:
    """(client, editor_client) for a model pipeline; ``(None, None)`` for the offline one.

    ``editor_client`` is None unless the editor runs on its own (transformers) backend.
    """
    if settings.pipeline.backend not in ("openai", "hybrid"):
        return None, None
    return build_client(settings, state, run_id), build_editor_client(settings, state, run_id)


def build_editor_client(settings: Settings, state: State | None, run_id: int | None):
    """The editor's own client (a local transformers model), or None to use the main client."""
    if settings.llm.editor_backend != "transformers":
        return None

    if not settings.llm.editor_model_dir:
        raise ConfigError("llm.editor_backend = 'transformers' needs llm.editor_model_dir")
    backend = get_backend("transformers", model_dir=settings.llm.editor_model_dir)
    return ModelClient(backend, state=state, run_id=run_id)


def build_local_editor(settings: Settings, state: State | None, run_id: int | None = None):
    """The fine-tuned local editor: ``editor_model_dir``, else the adapter shipped with winellbot."""


    chosen = editor_model(settings.llm.editor_model_dir or None)
    return LocalEditor(local_client(chosen, state=state, run_id=run_id), **copy_decoding(chosen))


def build_gates(settings: Settings, state: State | None, client=None, *, for_review: bool = False):
    """The gate chain; with a model ``client`` it includes the model's support judge. ``for_review``
    (the bot in the reviewed mode): the acceptability score orders the review queue and holds nothing
    on its own, and a line held only for its wording goes to the queue marked for rewording; the
    back-test (unless ``--reviewed``) and the fits keep the bar, which is what a post without review gets."""
    judge_model = settings.llm.stage_models.get("judge", "") if client is not None else ""
    p = settings.pipeline
    return default_gates(state=state, client=client, judge_model=judge_model, language=settings.wiki.language,
                         acceptability_path=p.acceptability_model or None,
                         acceptability_threshold=None if p.acceptability_threshold < 0 else p.acceptability_threshold,
                         backend=p.backend, acceptability_holds=not for_review, reword=for_review)


def build_revision_check(settings: Settings, state: State | None, client=None) -> RevisionCheck:
    """The job's check of a reviewer's revision before it is posted: the configured chain's gates that
    read the text against its source and article (with a model ``client``, its support judge too)."""
    return RevisionCheck(build_gates(settings, state, client=client, for_review=settings.review.mode == "reviewed"),
                         language=settings.wiki.language)


@dataclass
class Wiki:
    site: object
    reader: object
    writer: object


def build_wiki(settings: Settings, state_dir: Path) -> Wiki:
    """Connect to the configured wiki (a registered API URL, or the operator's Pywikibot config)."""
    w = settings.wiki
    if w.api_url:
        import sys

        if not settings.bot_password:
            raise ConfigError(f"WINELLBOT_BOT_PASSWORD is not set: the BotPassword of "
                              f"{w.username}@{w.bot_password_app} is needed to log in to {w.api_url}")
        if "pywikibot" not in sys.modules:  # else its config folder is fixed already (tests, embedding)
            try:
                wiki_site.prepare_pywikibot(state_dir / "pywikibot")
            except OSError as exc:  # Pywikibot keeps its files beside the state: a read-only folder
                raise StorageError(f"cannot prepare Pywikibot's folder beside the state, {state_dir / 'pywikibot'}: "
                                   f"{exc}: give the user the bot runs as write access to {state_dir}") from exc
        site = wiki_site.connect(w.api_url, w.username, settings.bot_password, app=w.bot_password_app,
                                 family_name=w.family_name or None, throttle=w.put_throttle, maxlag=w.maxlag,
                                 simulate=w.simulate, max_wait=w.max_wait)
    else:
        site = wiki_site.operator_site(max_wait=w.max_wait)
    # lazy: the writer imports pywikibot, which may load only after prepare_pywikibot() above
    from winellbot.wiki.writer import WikiWriter

    writer = WikiWriter(site, bot_user=w.username, shutoff_page=w.shutoff,
                        new_section_interval_days=w.new_section_interval_days, message_type=w.message_type,
                        optin_template=w.optin_template, control_pages=w.control_pages(),
                        reviewed=settings.review.mode == "reviewed")
    return Wiki(site, WikiReader(site, optin_template=w.optin_template), writer)
