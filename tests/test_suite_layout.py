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
    """What ``conftest.heavy_modules_first`` reads of a collected test: its file, fixtures and marks."""

    def __init__(self, name: str, fixtures=(), marks=()):
        self.name, self.path, self.fixturenames, self.marks = name, TESTS / name, list(fixtures), list(marks)

    def get_closest_marker(self, name):
        return next((m for m in self.marks if m.name == name), None)


def test_two_processes_start_with_the_modules_of_the_wiki_the_model_server_and_the_slow_tests():
    import pytest

    from conftest import heavy_modules_first

    wiki, slow = pytest.mark.wiki.mark, pytest.mark.slow.mark
    items = [FakeItem("test_a.py"), FakeItem("test_b.py"), FakeItem("test_b.py", ["site"], [wiki]),
             FakeItem("test_c.py", ["local_model_server"]), FakeItem("test_d.py"), FakeItem("test_e.py", marks=[slow]),
             FakeItem("test_c.py")]
    heavy_modules_first(items)
    assert [item.name for item in items] == ["test_b.py", "test_b.py", "test_c.py", "test_e.py", "test_c.py",
                                             "test_a.py", "test_d.py"]


def test_the_model_server_is_shared_by_one_module_only():
    """Each process starts its own llama.cpp server for the tests that use it; with them all in one module,
    which goes whole to one process, it is started once in a run."""
    def uses_the_server(path: Path) -> bool:
        return any(isinstance(node, ast.FunctionDef) and "local_model_server" in {a.arg for a in node.args.args}
                   for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))))

    assert sorted(p.name for p in TESTS.glob("test_*.py") if uses_the_server(p)) == ["test_local_server.py"]


def test_the_fast_lane_leaves_out_every_server_and_the_slow_tests():
    """`bash scripts/test.sh --fast` deselects each marker of a test that starts a server or is slow: a new
    such marker registered in setup.cfg must be added to the lane's expression too."""
    import configparser
    import re

    cfg = configparser.ConfigParser()
    cfg.read(TESTS.parent / "setup.cfg", encoding="utf-8")
    markers = {line.split(":")[0].strip() for line in cfg["tool:pytest"]["markers"].splitlines() if line.strip()}
    about_the_state = {"sqlite_state", "module_state"}  # which engine a test's state is on: no server of its own
    script = (TESTS.parent / "scripts" / "test.sh").read_text(encoding="utf-8")
    (expression,) = re.findall(r'^fast_lane="(.*)"$', script, re.MULTILINE)
    assert set(re.findall(r"not (\w+)", expression)) == markers - about_the_state
    assert " or " not in expression and "--fast" in script
