"""Every command line of the workspace explains itself: each option, argument and subcommand has
help text.

The command lines are found, not listed: every tracked source file (tests aside) that builds an
`argparse.ArgumentParser` must expose it through `build_parser()`, so a new CLI cannot slip by.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _cli_files() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    files = [ROOT / f for f in out if "/tests/" not in f and not f.startswith("tests/")]
    return sorted(f for f in files if "ArgumentParser(" in f.read_text(encoding="utf-8"))


def _load(path: Path):
    rel = path.relative_to(ROOT)
    if "src" in rel.parts:  # an installed workspace package: import it by its module name
        parts = rel.parts[rel.parts.index("src") + 1 :]
        return importlib.import_module(".".join((*parts[:-1], Path(parts[-1]).stem)))
    # benches/ scripts: load from the file, leaving sys.path as it was (they add the root).
    saved = list(sys.path)
    try:
        sys.path.insert(0, str(ROOT))
        name = "_cli_" + "_".join(rel.with_suffix("").parts)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path[:] = saved


def undocumented(parser: argparse.ArgumentParser, where: str) -> list[str]:
    """Every option, positional and subcommand of `parser` (recursively) without help text."""
    problems = [] if parser.description else [f"{where}: no description"]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if isinstance(action, argparse._SubParsersAction):
            helped = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                if not helped.get(name):
                    problems.append(f"{where} {name}: subcommand without help")
                problems += undocumented(sub, f"{where} {name}")
            continue
        if not action.help or action.help == argparse.SUPPRESS:
            name = "/".join(action.option_strings) or action.dest
            problems.append(f"{where}: {name} has no help")
    return problems


CLI_FILES = _cli_files()


def test_the_command_lines_are_found():
    found = {str(p.relative_to(ROOT)) for p in CLI_FILES}
    assert {
        "examples/guide/src/guide/cli.py",
        "packages/burn/src/burn/backend/__main__.py",
        "benches/run.py",
    } <= found


@pytest.mark.parametrize("path", CLI_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_option_and_subcommand_has_help(path):
    module = _load(path)
    build = getattr(module, "build_parser", None)
    assert callable(build), f"{path.relative_to(ROOT)}: expose the parser as build_parser()"
    parser = build()
    assert undocumented(parser, parser.prog) == []


def test_the_check_catches_a_missing_help():
    parser = argparse.ArgumentParser(prog="demo", description="d")
    sub = parser.add_subparsers()
    train = sub.add_parser("train")
    train.add_argument("--epochs", type=int)
    assert undocumented(parser, "demo") == [
        "demo train: subcommand without help",
        "demo train: no description",
        "demo train: --epochs has no help",
    ]


def test_guide_train_help_text(capsys):
    from guide.cli import build_parser

    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(["train", "--help"])
    assert exit_.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for phrase in (
        "--epochs EPOCHS number of epochs",
        "--limit LIMIT use only the first N items",
        "--artifact-dir ARTIFACT_DIR folder for config.json",
        "--backend BACKEND an installed backend's entry-point name",
        "--dataset {digits,mnist} digits: the digits bundled with burn-dataset",
    ):
        assert phrase in text, phrase
