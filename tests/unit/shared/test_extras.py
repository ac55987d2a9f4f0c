"""A feature whose optional library is not installed says which part of the install to add."""

from __future__ import annotations

import builtins
import importlib
from typing import Any

import pytest

from shared.adapters.llm import make_llm
from shared.adapters.llm.errors import LLMConfigError
from shared.extras import MissingExtraError, missing_extra
from shared.settings import Settings
from treerag import cli


def test_the_extra_is_named_by_the_module_that_is_missing() -> None:
    assert missing_extra(ModuleNotFoundError("no", name="sklearn.linear_model")) == "fit"
    assert missing_extra(ModuleNotFoundError("no", name="fastapi")) == "gateway"
    assert missing_extra(ModuleNotFoundError("no", name="numpy")) is None
    assert "pip install 'treerag[fit]'" in str(MissingExtraError("treerag eval", "fit"))


def test_a_command_without_its_extra_says_what_to_install(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    real = importlib.import_module

    def without_sklearn(name: str, *args: Any) -> Any:
        if name == "treerag.commands.eval":
            raise ModuleNotFoundError("No module named 'sklearn'", name="sklearn")
        return real(name, *args)

    monkeypatch.setattr(cli.importlib, "import_module", without_sklearn)
    with pytest.raises(SystemExit) as stopped:
        cli.build_parser(["eval", "--help"])
    assert stopped.value.code == 2
    assert "pip install 'treerag[fit]'" in capsys.readouterr().err
    # The other commands are still there when none is named.
    parser = cli.build_parser(["--help"])
    assert "ask" in parser.format_help() and "eval" not in parser.format_help().split("{")[1].split("}")[0]


def test_gemini_without_its_client_library_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real = builtins.__import__

    def without_genai(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("google") or name == "shared.adapters.llm.gemini":
            raise ModuleNotFoundError("No module named 'google'", name="google")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_genai)
    monkeypatch.setenv("GOOGLE_API_KEY", "unused")
    with pytest.raises(LLMConfigError, match=r"treerag\[gemini\]"):
        make_llm(Settings(llm="gemini"))
