"""LocalCorpus: SQLite FTS5 search with BM25 ranking over JSON/JSONL documents."""
import json

import pytest

from winellbot.models import Document
from winellbot.search.corpus import LocalCorpus, fts_query

DOCS = [
    {"id": "a", "url": "https://news.example/a", "title": "Harbour bridge opens",
     "text": "The harbour bridge opened to traffic on Monday after four years of work.", "published": "2024-03-01"},
    {"id": "b", "url": "https://news.example/b", "title": "Council budget",
     "text": "The council approved its budget. The bridge was mentioned once.", "published": "2023-01-01"},
    {"id": "c", "url": "https://news.example/c", "title": "Football", "text": "A match report.", "published": None},
]


def test_search_ranks_by_bm25_and_returns_documents():
    corpus = LocalCorpus()
    assert corpus.add(DOCS) == 3
    results = corpus.search("harbour bridge traffic")
    assert [r.document.id for r in results] == ["a", "b"]
    assert results[0].rank == 1 and results[0].backend == "corpus"
    assert isinstance(results[0].document, Document)
    assert results[0].document.text.startswith("The harbour bridge")


@pytest.mark.parametrize("query", ['bridge" OR', "NEAR(", "a AND", "*", "(((", "'; drop table x", "-bridge:"])
def test_queries_from_arbitrary_text_never_raise(query):
    corpus = LocalCorpus()
    corpus.add(DOCS)
    corpus.search(query)  # must not raise an FTS syntax error


def test_fts_query_quotes_terms_and_drops_stop_words():
    assert fts_query('The "bridge" AND the harbour') == '"bridge" OR "harbour"'
    assert fts_query("the of and") == ""


def test_since_filters_older_documents():
    corpus = LocalCorpus()
    corpus.add(DOCS)
    assert [r.document.id for r in corpus.search("bridge", since="2024-01-01")] == ["a"]


def test_load_dir_reads_json_and_jsonl(tmp_path):
    (tmp_path / "one.json").write_text(json.dumps(DOCS[0]), encoding="utf-8")
    (tmp_path / "list.json").write_text(json.dumps([DOCS[1]]), encoding="utf-8")
    (tmp_path / "more.jsonl").write_text(json.dumps(DOCS[2]) + "\n\n", encoding="utf-8")
    corpus = LocalCorpus(tmp_path / "corpus.db")
    assert corpus.load_dir(tmp_path) == 3
    assert len(corpus) == 3
    assert {d.id for d in corpus.documents()} == {"a", "b", "c"}


def test_bad_files_lines_and_documents_are_recorded_and_skipped(tmp_path):
    (tmp_path / "good.jsonl").write_text(json.dumps(DOCS[0]) + "\n" + "{not json\n" + json.dumps(DOCS[1]) + "\n",
                                         encoding="utf-8")
    (tmp_path / "latin1.jsonl").write_bytes(b'{"id": "x", "text": "caf\xe9"}\n' + json.dumps(DOCS[2]).encode() + b"\n")
    (tmp_path / "values.json").write_text(json.dumps(["just a string", {"title": "no id, no url"},
                                                      {"id": "n", "text": 42}]), encoding="utf-8")
    (tmp_path / "broken.json").write_text('{"id": "cut off', encoding="utf-8")
    (tmp_path / "scalar.jsonl").write_text("17\n", encoding="utf-8")
    corpus = LocalCorpus()
    assert corpus.load_dir(tmp_path) == 3
    assert {d.id for d in corpus.documents()} == {"a", "b", "c"}
    problems = "\n".join(corpus.problems)
    assert len(corpus.problems) == 7, problems
    for expected in ("good.jsonl line 2: not JSON", "latin1.jsonl line 1: not UTF-8 text", "must be a JSON object, not str",
                     "needs an id or a url", "text must be text, not int", "broken.json: not JSON",
                     "scalar.jsonl line 1: a corpus document must be a JSON object, not int"):
        assert expected in problems, expected


def test_a_missing_corpus_folder_is_an_error(tmp_path):
    from winellbot.errors import SearchError

    with pytest.raises(SearchError, match="does not exist"):
        LocalCorpus().load_dir(tmp_path / "nowhere")


def test_a_deeply_nested_line_is_skipped_not_a_crash(tmp_path):
    nested = "[" * 100_000 + "]" * 100_000  # 200 KB of nesting: json raises RecursionError
    (tmp_path / "n.jsonl").write_text(nested + "\n" + json.dumps(DOCS[0]) + "\n", encoding="utf-8")
    corpus = LocalCorpus()
    assert corpus.load_dir(tmp_path) == 1
    assert "nested too deeply" in corpus.problems[0]


def test_a_huge_source_is_not_read_and_its_step_and_a_recorded_skip_say_why():
    from winellbot.models import Document, NavigationStep, SearchResult
    from winellbot.pipeline.loop import UpdateAggregationLoop
    from winellbot.text import MAX_DOCUMENT_CHARS

    doc = Document("big", "https://example.org/big", "Big", "word " * (MAX_DOCUMENT_CHARS // 5 + 10))
    step = NavigationStep("q", SearchResult(doc.url, doc.title, document=doc))
    steps, errors = [step], []
    assert UpdateAggregationLoop._read(step, None, steps, errors) is None
    assert "over the cap" in steps[0].reason
    assert errors == [f"source not read: {doc.url}: 500,050 characters, over the cap of 500,000 for one source"]
