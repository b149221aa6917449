"""The test suite's own layout: shared helpers live in conftest.py or helper modules, never in a test file."""
import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at its top or inside functions."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def test_no_test_file_imports_another():
    test_modules = {p.stem for p in TESTS.glob("test_*.py")}
    found = {p.name: sorted(imported_modules(p) & test_modules) for p in sorted(TESTS.glob("*.py"))}
    assert {name: mods for name, mods in found.items() if mods} == {}, (
        "move what is shared to tests/conftest.py (fixtures) or a helper module beside it")


def test_the_check_sees_an_import_of_a_test_file(tmp_path):
    sample = tmp_path / "test_sample.py"
    sample.write_text("import json\n\ndef test_x():\n    from test_agent import run\n", encoding="utf-8")
    assert imported_modules(sample) == {"json", "test_agent"}


class FakeItem:
    """What ``conftest._group_for_xdist`` reads of a collected test: its file, fixtures and marks."""

    def __init__(self, name: str, fixtures=(), marks=()):
        self.path, self.fixturenames, self.marks = TESTS / name, list(fixtures), list(marks)

    def get_closest_marker(self, name):
        return next((m for m in self.marks if m.name == name), None)

    def add_marker(self, decorator):
        self.marks.append(decorator.mark)


def test_two_processes_keep_modules_whole_share_the_model_server_and_start_with_the_heavy_ones():
    import pytest

    from conftest import _group_for_xdist

    items = [FakeItem("test_a.py"), FakeItem("test_a.py"), FakeItem("test_b.py", ["site"], [pytest.mark.wiki.mark]),
             FakeItem("test_c.py", ["local_model_server"]), FakeItem("test_c.py"),
             FakeItem("test_d.py", marks=[pytest.mark.xdist_group("mine").mark])]
    _group_for_xdist(items)
    groups = [(item.path.name, item.get_closest_marker("xdist_group").args[0]) for item in items]
    assert groups == [("test_b.py", "test_b.py"), ("test_c.py", "local_model_server"), ("test_c.py", "test_c.py"),
                      ("test_a.py", "test_a.py"), ("test_a.py", "test_a.py"), ("test_d.py", "mine")]
