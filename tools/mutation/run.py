"""The mutation run over the packages' hot modules, with cosmic-ray (see CONTRIBUTING.md).

    uv run --with cosmic-ray==8.7.0 python tools/mutation/run.py            # every package
    uv run --with cosmic-ray==8.7.0 python tools/mutation/run.py burn-nn    # one package
    ... run.py --list               # count the mutants, run nothing
    ... run.py --resume             # go on with an interrupted run (pending mutants only)
    ... run.py --rerun-survivors    # after adding tests: run only the last run's survivors

`config.toml` beside this file names, per package, the functions to mutate and the tests that
judge a mutant. cosmic-ray writes one mutant at a time into the source file, runs the tests
(this script with `--test PACKAGE`) and puts the file back. Sessions (SQLite) and the report
(`report.md`: the score table, then each survivor's diff) go to `tools/mutation/out/`.
Survivors documented as equivalent in `EQUIVALENT.md` are marked so in the report.
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import sqlite3
import subprocess
import sys
import time
import tomllib
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUT = HERE / "out"
PYTEST_FLAGS = ["-x", "-q", "-p", "no:cacheprovider"]


def load_config() -> dict:
    return tomllib.loads((HERE / "config.toml").read_text())


# -- the test command of one package (what cosmic-ray runs for each mutant) -------------------
def run_tests(package: str) -> int:
    """Run `package`'s test commands in order; the first failing one's exit status, else 0."""
    for argv in load_config()["packages"][package]["tests"]:
        argv = list(argv)
        if argv[:2] == ["-m", "pytest"]:
            argv[2:2] = PYTEST_FLAGS
        rc = subprocess.call([sys.executable, *argv], cwd=ROOT)
        if rc:
            return rc
    return 0


# -- which mutations: the configured functions' lines, the configured operators ---------------
def function_lines(path: Path, names: list[str]) -> list[tuple[int, int]]:
    """(first, last) line of each named function (`f`, `Class.method`; `*`: the whole file)."""
    if names == ["*"]:
        return [(1, len(path.read_text().splitlines()))]
    found: dict[str, tuple[int, int]] = {}

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                found[name] = (child.lineno, child.end_lineno)
                if isinstance(child, ast.ClassDef):
                    walk(child, name + ".")

    walk(ast.parse(path.read_text()), "")
    missing = [n for n in names if n not in found]
    if missing:
        raise SystemExit(f"{path}: no function {missing} (update tools/mutation/config.toml)")
    return [found[n] for n in names]


def annotation_spans(path: Path) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(start, end) positions (line, column) of the type annotations in `path`: with
    `from __future__ import annotations` they are strings that never run, so a mutant there
    (`int | None` -> `int & None`) is equivalent by construction and is not generated."""
    spans = []
    for node in ast.walk(ast.parse(path.read_text())):
        notes = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            notes.append(node.returns)
        elif isinstance(node, ast.arg):
            notes.append(node.annotation)
        elif isinstance(node, ast.AnnAssign):
            notes.append(node.annotation)
        for n in notes:
            if n is not None:
                spans.append(((n.lineno, n.col_offset), (n.end_lineno, n.end_col_offset)))
    return spans


def in_spans(pos: tuple[int, int], spans) -> bool:
    return any(lo <= tuple(pos) < hi for lo, hi in spans)


def work_items(spec: dict, operator_patterns: list[str]):
    """cosmic-ray work items: one per (operator, occurrence) whose node starts on a line of a
    configured function. The occurrence counts over the whole module, as cosmic-ray's own
    `init` does, so the mutant applied is the one listed."""
    import cosmic_ray.plugins
    from cosmic_ray.ast import ast_nodes, get_ast_from_path
    from cosmic_ray.work_item import MutationSpec, WorkItem

    wanted = re.compile("|".join(f"(?:{p})" for p in operator_patterns))
    operators = [
        n for n in cosmic_ray.plugins.operator_names() if wanted.fullmatch(n.split("/")[-1])
    ]
    for rel, names in spec["functions"].items():
        path = ROOT / rel
        ranges = function_lines(path, names)
        notes = annotation_spans(path)
        tree = get_ast_from_path(path)
        for name in operators:
            operator = cosmic_ray.plugins.get_operator(name)()
            positions = (
                (start, end) for node in ast_nodes(tree) for start, end in operator.mutation_positions(node)
            )
            for occurrence, (start, end) in enumerate(positions):
                # NumberReplacer lists each literal twice (+1, then -1): keep the -1 only
                if name.endswith("/NumberReplacer") and occurrence % 2 == 0:
                    continue
                if any(lo <= start[0] <= hi for lo, hi in ranges) and not in_spans(start, notes):
                    yield WorkItem.single(
                        job_id=uuid.uuid4().hex,
                        mutation=MutationSpec(
                            module_path=str(path),
                            operator_name=name,
                            operator_args={},
                            occurrence=occurrence,
                            start_pos=start,
                            end_pos=end,
                        ),
                    )


# -- one package's session --------------------------------------------------------------------
def restore_backup(package: str) -> None:
    """A run killed mid-mutant leaves a mutated file: put back the copy taken before it ran."""
    backup = OUT / f"{package}.backup"
    if backup.exists():
        for saved in backup.rglob("*.py"):
            target = ROOT / saved.relative_to(backup)
            if target.read_bytes() != saved.read_bytes():
                print(f"restoring {target.relative_to(ROOT)} (an earlier run was killed)")
                shutil.copyfile(saved, target)
        shutil.rmtree(backup)


def run_package(package: str, spec: dict, cfg: dict, mode: str) -> None:
    from cosmic_ray.commands import execute
    from cosmic_ray.config import ConfigDict
    from cosmic_ray.work_db import WorkDB, use_db

    OUT.mkdir(exist_ok=True)
    restore_backup(package)
    db_path = OUT / f"{package}.sqlite"
    if mode == "fresh" and db_path.exists():
        db_path.unlink()
    if mode == "rerun-survivors":
        with sqlite3.connect(db_path) as con:
            con.execute("DELETE FROM work_results WHERE test_outcome = 'SURVIVED'")
    with use_db(str(db_path), WorkDB.Mode.create) as db:
        if mode == "fresh":
            db.add_work_items(work_items(spec, cfg["run"]["operators"]))
        pending = sum(1 for _ in db.pending_work_items)
        print(f"== {package}: {db.num_work_items} mutants, {pending} to run", flush=True)
        if not pending:
            return
        t0 = time.monotonic()
        if run_tests(package):
            raise SystemExit(f"{package}: the tests fail without any mutant; fix that first")
        base = time.monotonic() - t0
        timeout = cfg["run"]["timeout_factor"] * base + cfg["run"]["timeout_slack"]
        print(f"   unmutated tests: {base:.1f} s; timeout per mutant {timeout:.0f} s", flush=True)
        backup = OUT / f"{package}.backup"
        for rel in spec["functions"]:
            (backup / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / rel, backup / rel)
        config = ConfigDict(
            {
                "module-path": [str(ROOT / rel) for rel in spec["functions"]],
                "timeout": timeout,
                "excluded-modules": [],
                "test-command": f"{sys.executable} {Path(__file__).resolve()} --test {package}",
                "distributor": {"name": "local"},
            }
        )
        execute(db, config)
        restore_backup(package)


# -- the report -------------------------------------------------------------------------------
def equivalent_keys() -> set[tuple[str, str, str]]:
    """(file name, operator, mutated line) of each survivor EQUIVALENT.md explains; its
    bullets start with "- `FILE:LINE OPERATOR | MUTATED LINE`" (the line number is for the
    reader: it moves when the file changes, the key does not). "- `FILE:LINE * | LINE`" (any
    operator) covers every mutant of that original line, e.g. a line that never runs."""
    keys = set()
    path = HERE / "EQUIVALENT.md"
    if path.exists():
        for m in re.finditer(r"^- `([^:`]+):\d+ (\S+) \| (.+?)`", path.read_text(), re.M):
            keys.add((m.group(1), m.group(2), m.group(3).strip()))
    return keys


def survivor_key(module: str, operator: str, diff: str) -> tuple[str, str, str, str]:
    """(file name, operator, mutated line, original line) of a mutant, from its diff."""

    def first(sign):
        lines = diff.splitlines()
        found = [ln[1:].strip() for ln in lines if ln[:1] == sign and ln[:3] != sign * 3]
        return found[0] if found else ""

    return Path(module).name, operator.split("/")[-1], first("+"), first("-")


def report(packages: list[str]) -> str:
    rows, details = [], []
    known = equivalent_keys()
    totals = dict.fromkeys(("killed", "timeout", "survived", "equivalent", "error", "total"), 0)
    for package in packages:
        db_path = OUT / f"{package}.sqlite"
        if not db_path.exists():
            continue
        with sqlite3.connect(db_path) as con:
            found = con.execute(
                "SELECT m.module_path, m.operator_name, m.start_pos_row, m.start_pos_col,"
                " r.worker_outcome, r.test_outcome, r.output, r.diff FROM mutation_specs m"
                " LEFT JOIN work_results r ON r.job_id = m.job_id ORDER BY m.module_path,"
                " m.start_pos_row, m.operator_name"
            ).fetchall()
        c = dict.fromkeys(totals, 0)
        notes = {m: annotation_spans(Path(m)) for m in {f[0] for f in found}}
        for module, operator, line, column, worker, outcome, output, diff in found:
            if in_spans((line, column), notes[module]):
                continue  # an annotation: not generated any more (a session made before)
            c["total"] += 1
            if worker is None:
                c["total"] -= 1  # not run yet
            elif worker != "NORMAL" or outcome == "INCOMPETENT":
                c["error"] += 1
            elif outcome == "KILLED":
                c["timeout" if output == "timeout" else "killed"] += 1
            else:
                file, op, text, original = survivor_key(module, operator, diff or "")
                equiv = (file, op, text) in known or (file, "*", original) in known
                c["equivalent" if equiv else "survived"] += 1
                rel = Path(module).resolve().relative_to(ROOT)
                tag = " (equivalent: EQUIVALENT.md)" if equiv else ""
                details.append(
                    f"### {package}: `{file}:{line} {op} | {text}`{tag}\n\n"
                    f"```diff\n{(diff or '').strip()}\n```\n(`{rel}`)\n"
                )
        for k in totals:
            totals[k] += c[k]
        rows.append((package, c))
    rows.append(("all", totals))
    # caught: of every mutant cosmic-ray could run; score: of those that are not equivalent
    # (the usual mutation score: an equivalent mutant is no bug for a test to catch)
    lines = [
        "| package | mutants | killed | timeout | survived | equivalent | error | caught | score |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]

    def pct(a, b):
        return f"{100 * a / b:.1f}%" if b else "-"

    for name, c in rows:
        judged = c["total"] - c["error"]
        caught = c["killed"] + c["timeout"]
        lines.append(
            f"| {name} | {c['total']} | {c['killed']} | {c['timeout']} | {c['survived']} | "
            f"{c['equivalent']} | {c['error']} | {pct(caught, judged)} | "
            f"{pct(caught, judged - c['equivalent'])} |"
        )
    table = "\n".join(lines)
    text = "# Mutation run\n\n" + table + "\n\n## Survivors\n\n" + "\n".join(details)
    OUT.mkdir(exist_ok=True)
    (OUT / "report.md").write_text(text)
    return table


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("packages", nargs="*", help="packages to run (default: all in config.toml)")
    ap.add_argument(
        "--test", metavar="PACKAGE", help="run PACKAGE's judging tests once (cosmic-ray calls this)"
    )
    ap.add_argument("--list", action="store_true", help="count the mutants per package, run none")
    ap.add_argument("--resume", action="store_true", help="run only the pending mutants")
    ap.add_argument("--rerun-survivors", action="store_true", help="re-run the survivors only")
    ap.add_argument("--report", action="store_true", help="only print the last run's table")
    return ap


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if args.test:
        return run_tests(args.test)
    cfg = load_config()
    packages = args.packages or list(cfg["packages"])
    unknown = [p for p in packages if p not in cfg["packages"]]
    if unknown:
        raise SystemExit(f"not in tools/mutation/config.toml: {unknown}")
    if args.list:
        for p in packages:
            print(f"{p}: {sum(1 for _ in work_items(cfg['packages'][p], cfg['run']['operators']))}")
        return 0
    if not args.report:
        mode = "resume" if args.resume else "rerun-survivors" if args.rerun_survivors else "fresh"
        t0, c0 = time.monotonic(), _cpu()
        for p in packages:
            run_package(p, cfg["packages"][p], cfg, mode)
        print(f"wall {time.monotonic() - t0:.0f} s, CPU {_cpu() - c0:.0f} s (with the test runs)")
    print(report(packages))
    print(f"survivors' diffs: {OUT.relative_to(ROOT) / 'report.md'}")
    return 0


def _cpu() -> float:
    import resource

    own, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


if __name__ == "__main__":
    sys.exit(main())
