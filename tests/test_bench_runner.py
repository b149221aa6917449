"""The backtest runner: the pipeline never sees held_out or document_origins."""
import dataclasses
import json

from bench_tasks import SENTINEL, build_offline_pipeline, every_gate, write_bridge_task

from winellbot.bench.backtest import oracle_view, read_suggestions, run_backtest
from winellbot.bench.cli import pipeline_factory
from winellbot.bench.tasks import BotTask, load_task
from winellbot.config import Settings
from winellbot.models import PipelineResult
from winellbot.pipeline.pipeline import Pipeline


class RecordingPipeline(Pipeline):
    """The real offline pipeline, recording everything it is given or can find."""

    seen: list = []

    def propose(self, article, search, fetcher=None, **kw) -> PipelineResult:
        RecordingPipeline.seen.append(repr(article))
        for result in search.search("harbour bridge soup recipe cars town", limit=100):
            RecordingPipeline.seen.append(repr(result))
        return super().propose(article, search, fetcher, **kw)


def recording_factory():
    base = build_offline_pipeline()
    return RecordingPipeline(**{f.name: getattr(base, f.name) for f in dataclasses.fields(base)})


def test_bot_view_holds_only_title_wikitext_and_documents(tmp_path):
    task = load_task(write_bridge_task(tmp_path / "t.json"))
    view = task.bot_view()
    assert [f.name for f in dataclasses.fields(BotTask)] == ["title", "wikitext", "documents"]
    assert SENTINEL not in repr(view)


def test_runner_never_passes_held_out_or_origins(tmp_path):
    write_bridge_task(tmp_path / "t.json")
    RecordingPipeline.seen = []
    lines = run_backtest(tmp_path, tmp_path / "out" / "s.jsonl", pipeline_factory=recording_factory,
                         progress=False)
    seen = "\n".join(RecordingPipeline.seen)
    assert "Harbour Bridge opens" in seen  # the recorder did see the documents
    assert SENTINEL not in seen
    assert SENTINEL not in json.dumps(lines)
    assert read_suggestions(tmp_path / "out" / "s.jsonl") == lines


def test_runner_writes_suggestions_in_the_bench_format(tmp_path):
    write_bridge_task(tmp_path / "t.json", held_text="On its first day the bridge carried 5,000 cars.")
    lines = run_backtest(tmp_path, None, pipeline_factory=build_offline_pipeline, progress=False, gates=every_gate())
    assert 1 <= len(lines) <= 5
    first = lines[0]
    assert first["task"] == "wgb-1"
    assert first["section_path"] in (["History"], ["Design"])
    assert first["documents"] == ["d1"]
    assert "5,000 cars" in first["text"]


def test_oracle_mode_gives_the_held_out_sentences_as_documents_only(tmp_path):
    task = load_task(write_bridge_task(tmp_path / "t.json", held_text="The bridge carried 5,000 cars on day one."))
    view = oracle_view(task)
    assert [d.text for d in view.documents] == ["The bridge carried 5,000 cars on day one."]
    assert "History" not in repr(view.documents)  # the section does not travel
    lines = run_backtest(tmp_path, None, pipeline_factory=build_offline_pipeline, oracle=True, progress=False,
                         gates=every_gate())
    assert lines and lines[0]["text"].startswith("The bridge carried 5,000 cars")


def test_tasks_in_two_processes_give_the_lines_of_one(tmp_path):
    from collections import Counter

    from winellbot.bench.backtest import run_tasks
    from winellbot.bench.tasks import load_tasks

    write_bridge_task(tmp_path / "a.json", held_text="On its first day the bridge carried 5,000 cars.")
    second = json.loads(write_bridge_task(tmp_path / "b.json").read_text(encoding="utf-8"))
    second["id"] = "wgb-2"
    second["wikitext"] += " Its lanes are wide."  # another article: no cache of the first task's serves it
    (tmp_path / "b.json").write_text(json.dumps(second), encoding="utf-8")
    tasks = load_tasks(tmp_path)
    runs = {}
    for jobs in (1, 2):  # the second after this process has run torch: its workers must not hang
        settings = Settings()  # a cache of its own: the workers embed (OpenMP after a fork)
        settings.pipeline.embedding_cache = str(tmp_path / f"embeddings-{jobs}.sqlite")
        gate_stats, embedded, skips = Counter(), Counter(), {}
        lines = run_tasks(tasks, None, pipeline_factory=pipeline_factory(settings), progress=False, jobs=jobs,
                          gate_stats=gate_stats, embeddings=embedded, skips=skips, gates=every_gate())
        runs[jobs] = (lines, gate_stats, embedded["computed"] + embedded["cached"], skips)
    assert {line["task"] for line in runs[1][0]} == {"wgb-1", "wgb-2"}
    assert runs[2][0] == runs[1][0]  # same lines, same order
    assert runs[2][1] == runs[1][1] and runs[2][1]["checked"] >= 2
    assert runs[2][2] == runs[1][2] > 0  # the workers' embedder figures are summed (computed + cached)
    assert runs[1][3] == runs[2][3] == {}
