"""The aggregation loop shared by every backend: bounds, replace/add/ignore bookkeeping, fetch failures."""
from winellbot.errors import FetchError
from winellbot.models import Article, Decision, Document, NavigationStep, SearchResult, SectionCriteria, Section, Update
from winellbot.interface import Aggregator, Extractor, Fetcher, Navigator, SearchBackend
from winellbot.pipeline.loop import UpdateAggregationLoop, apply_decision

ARTICLE = Article("Town", "Lead.", (Section("", 0, (), ()),))
CRITERIA = SectionCriteria({(): "anything"})


def doc(n: int) -> Document:
    return Document(f"d{n}", f"https://news.example/{n}", f"t{n}", f"text {n}")


def upd(n: int, text: str | None = None) -> Update:
    return Update(text or f"fact {n}", (), "quote", doc(n), score=float(n))


class CountingNavigator(Navigator):
    """Offers result n at iteration n; records the memory it was shown."""

    def __init__(self, results: int, with_documents: bool = True):
        self.results = results
        self.with_documents = with_documents
        self.seen_memories = []

    def navigate(self, article, criteria, memory, search):
        self.seen_memories.append(memory)
        n = len(memory.queries)
        if n >= self.results:
            return NavigationStep(f"q{n}", None, "nothing left")
        result = SearchResult(doc(n).url, f"t{n}", document=doc(n) if self.with_documents else None)
        return NavigationStep(f"q{n}", result, "next")


class OneFactExtractor(Extractor):
    def extract(self, article, criteria, document):
        return [upd(int(document.id[1:]))]


class VerdictAggregator(Aggregator):
    def __init__(self, verdicts):
        self.verdicts = list(verdicts)

    def aggregate(self, article, update, kept):
        action = self.verdicts.pop(0) if self.verdicts else "add"
        replaces = kept[-1].key if action == "replace" and kept else None
        return Decision(action, update, f"scripted {action}", replaces)


class NoSearch(SearchBackend):
    def search(self, query, *, since=None, limit=10):
        return []


def test_loop_stops_at_its_iteration_bound():
    nav = CountingNavigator(results=100)
    loop = UpdateAggregationLoop(nav, OneFactExtractor(), VerdictAggregator([]), max_iterations=4, max_empty=9)
    result = loop.run(ARTICLE, CRITERIA, NoSearch(), None)
    assert len(result.steps) == 4
    assert [u.text for u in result.kept] == ["fact 0", "fact 1", "fact 2", "fact 3"]
    assert result.stopped_because == "iteration bound"


def test_loop_stops_after_consecutive_empty_iterations_and_feeds_verdicts_back():
    nav = CountingNavigator(results=100)
    loop = UpdateAggregationLoop(nav, OneFactExtractor(), VerdictAggregator(["add", "ignore", "ignore"]),
                                 max_iterations=10, max_empty=2)
    result = loop.run(ARTICLE, CRITERIA, NoSearch(), None)
    assert result.stopped_because == "too many empty iterations"
    assert len(result.steps) == 3
    # the navigator saw the ignore verdict before writing its third query
    assert [d.action for d in nav.seen_memories[2].decisions] == ["add", "ignore"]
    assert nav.seen_memories[2].queries == ("q0", "q1")


def test_replace_swaps_the_named_update_out():
    loop = UpdateAggregationLoop(CountingNavigator(2), OneFactExtractor(), VerdictAggregator(["add", "replace"]),
                                 max_iterations=5, max_empty=3)
    result = loop.run(ARTICLE, CRITERIA, NoSearch(), None)
    assert [u.text for u in result.kept] == ["fact 1"]
    assert result.stopped_because == "navigator found nothing new"


def test_apply_decision_never_keeps_the_same_update_twice():
    kept = (upd(1),)
    assert apply_decision(kept, Decision("add", upd(1), "again")) == kept
    assert apply_decision(kept, Decision("ignore", upd(2), "dup")) == kept


class FailingFetcher(Fetcher):
    def fetch(self, result):
        raise FetchError("connection refused")


def test_a_failed_fetch_is_recorded_and_the_loop_goes_on():
    loop = UpdateAggregationLoop(CountingNavigator(3, with_documents=False), OneFactExtractor(),
                                 VerdictAggregator([]), max_iterations=3, max_empty=5)
    result = loop.run(ARTICLE, CRITERIA, NoSearch(), FailingFetcher())
    assert len(result.errors) == 3
    assert "connection refused" in result.errors[0]
    assert result.kept == ()


class DeadSearchNavigator(Navigator):
    def navigate(self, article, criteria, memory, search):
        search.search("anything")
        raise AssertionError("unreachable")


class DeadSearch(SearchBackend):
    def search(self, query, *, since=None, limit=10):
        from winellbot.errors import SearchError

        raise SearchError("connection refused by search.example")


def test_a_dead_search_server_is_recorded_and_the_loop_ends_cleanly():
    loop = UpdateAggregationLoop(DeadSearchNavigator(), OneFactExtractor(), VerdictAggregator([]),
                                 max_iterations=5, max_empty=2)
    result = loop.run(ARTICLE, CRITERIA, DeadSearch(), None)
    assert result.stopped_because == "too many empty iterations"
    assert result.errors == ("search failed: connection refused by search.example",) * 2


class PdfNavigator(CountingNavigator):
    """Result 1 is a PDF file's bytes served as text (as scraped search results sometimes are)."""

    def navigate(self, article, criteria, memory, search):
        step = super().navigate(article, criteria, memory, search)
        if step.chosen is not None and step.chosen.url.endswith("/1"):
            pdf = Document("d1", step.chosen.url, "t1", "%PDF-1.4\n%\ufffd\ufffd\n1 0 obj\n<< /Filter /FlateDecode >>")
            step = NavigationStep(step.query, SearchResult(pdf.url, "t1", document=pdf), step.reason)
        return step


def test_a_pdf_read_as_text_is_not_extracted_and_its_step_and_a_recorded_skip_say_why():
    loop = UpdateAggregationLoop(PdfNavigator(3), OneFactExtractor(), VerdictAggregator([]),
                                 max_iterations=5, max_empty=3)
    result = loop.run(ARTICLE, CRITERIA, NoSearch(), None)
    assert [u.text for u in result.kept] == ["fact 0", "fact 2"]
    assert result.steps[1].reason == "next; not read: the raw bytes of a PDF file, not its text"
    assert result.errors == ("source not read: https://news.example/1: the raw bytes of a PDF file, not its text",)


class AllPdfNavigator(CountingNavigator):
    def navigate(self, article, criteria, memory, search):
        step = super().navigate(article, criteria, memory, search)
        pdf = Document("d9", step.chosen.url, "t", "%PDF-1.7\n%\ufffd\ufffd")
        return NavigationStep(step.query, SearchResult(pdf.url, "t", document=pdf), step.reason)


def test_pages_not_read_count_as_empty_iterations():
    loop = UpdateAggregationLoop(AllPdfNavigator(100), OneFactExtractor(), VerdictAggregator([]),
                                 max_iterations=10, max_empty=3)
    result = loop.run(ARTICLE, CRITERIA, NoSearch(), None)
    assert result.stopped_because == "too many empty iterations" and len(result.steps) == 3
    assert result.kept == ()


def test_results_without_a_fetcher_are_recorded_and_count_as_empty_iterations():
    loop = UpdateAggregationLoop(CountingNavigator(100, with_documents=False), OneFactExtractor(),
                                 VerdictAggregator([]), max_iterations=10, max_empty=2)
    result = loop.run(ARTICLE, CRITERIA, NoSearch(), None)
    assert result.stopped_because == "too many empty iterations" and len(result.steps) == 2
    assert result.errors == ("no fetcher for https://news.example/0", "no fetcher for https://news.example/1")
