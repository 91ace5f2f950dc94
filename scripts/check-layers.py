#!/usr/bin/env python3
"""Checks that every project include points down a layer (README "Layout").

Reads every `#include "..."` of the project's own headers, sources and kernel templates, maps the
including and the included file to their layers, and reports, with file and line:
  - an include that runs up a layer, or sideways into another layer of the same rank;
  - two folders of one layer that include each other;
  - a test outside tests/<folder>/, where <folder> names a layer's folder (tests sit on top of
    every layer, so they may include any of them);
  - a source file in a folder that no layer owns, or an include that names no file of ours.
Exit status: 0 clean, 1 violations found, 2 usage error.

  usage: scripts/check-layers.py [--root DIR]
"""
import argparse
import pathlib
import re
import sys

# Bottom first: (rank, layer, folders). A file may include its own layer and any lower rank.
# A folder belongs to the layer of its longest listed prefix (tuner/codegen/strategies is codegen).
LAYERS = [
    (1, "spec", ["tuner/spec"]),
    (2, "model", ["model"]),
    (3, "codegen", ["tuner/codegen", "templates"]),
    (4, "gpu", ["tuner/gpu"]),
    (5, "record", ["tuner/record"]),
    (6, "cache", ["db"]),
    (7, "search", ["tuner/search"]),
    (8, "api", ["include/tbtune", "tuner/api"]),
    (8, "report", ["tuner/report"]),
    (8, "sweep", ["tuner/sweep"]),
    (9, "cli", ["cli"]),
]
# Public headers are included as "tbtune/..." (the include/ folder is on the include path).
INCLUDE_ROOTS = ["", "include"]
SOURCE_SUFFIXES = {".hpp", ".cpp", ".h", ".c", ".cuh", ".cu"}
# Folders whose sources are not part of the layered library: tests are checked by their own rule,
# the rest is tooling.
SKIP_TOP = {"build", "scripts", "docs", "configs", "cmake", "examples", "bench", ".git"}
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def layer_of(rel):
    """(rank, layer, folder) of a path relative to the root, or None."""
    best = None
    for rank, name, folders in LAYERS:
        for folder in folders:
            if rel == folder or rel.startswith(folder + "/"):
                if best is None or len(folder) > len(best[2]):
                    best = (rank, name, folder)
    return best


def is_test_folder(name):
    """Whether tests/<name>/ mirrors a layer's folder (tests/spec/ for tuner/spec/, tests/db/...)."""
    # tests/fuzz/ holds the libFuzzer targets (scripts/fuzz.sh): each reads through several
    # layers from the top, like a test, so it mirrors none of them.
    if name == "fuzz":
        return True
    return any(name == f.split("/")[-1] for _, _, folders in LAYERS for f in folders)


def resolve(root, including, target):
    """The included file, relative to the root: next to the including file, else from a root."""
    candidates = [including.parent / target] + [root / r / target for r in INCLUDE_ROOTS]
    for c in candidates:
        if c.is_file():
            return c.resolve().relative_to(root.resolve()).as_posix()
    return None


def project_sources(root):
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if not path.is_file() or path.suffix not in SOURCE_SUFFIXES:
            continue
        if rel.parts[0] in SKIP_TOP or any(p.startswith(".") or p.startswith("build") for p in rel.parts):
            continue
        yield path, rel.as_posix()


def check(root):
    errors = []
    folder_edges = {}  # (layer, from folder, to folder) -> first "file:line"
    for path, rel in project_sources(root):
        if rel.startswith("tests/"):
            parts = rel.split("/")
            if len(parts) > 2 and not is_test_folder(parts[1]):
                errors.append(f"{rel}: tests/{parts[1]}/ mirrors no layer's folder")
            own = None  # on top of every layer
        else:
            own = layer_of(rel)
            if own is None:
                errors.append(f"{rel}: in a folder that no layer owns (add it to LAYERS in "
                              f"scripts/check-layers.py and to README Layout)")
                continue
        text = path.read_text(encoding="utf-8", errors="replace").splitlines()
        for lineno, line in enumerate(text, 1):
            m = INCLUDE_RE.match(line)
            if not m:
                continue
            where = f"{rel}:{lineno}: {line.strip()}"
            target = resolve(root, path, m.group(1))
            if target is None:
                errors.append(f"{where}: names no file of the project")
                continue
            if target.startswith("tests/"):
                if own is not None:
                    errors.append(f"{where}: library code includes a test file")
                continue
            dep = layer_of(target)
            if dep is None:
                errors.append(f"{where}: includes '{target}', which no layer owns")
                continue
            if own is None:  # a test
                continue
            if dep[1] == own[1]:
                if dep[2] != own[2]:
                    folder_edges.setdefault((own[1], own[2], dep[2]), where)
                continue
            if dep[0] < own[0]:
                continue
            kind = "an upward include" if dep[0] > own[0] else "a sideways include"
            errors.append(f"{where}: {kind}: layer {own[1]} (rank {own[0]}) includes layer "
                          f"{dep[1]} (rank {dep[0]})")
    for (layer, a, b), where in sorted(folder_edges.items()):
        if a < b and (layer, b, a) in folder_edges:
            errors.append(f"{where}: folders {a}/ and {b}/ include each other "
                          f"(and {folder_edges[(layer, b, a)]})")
    return errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parent.parent),
                        help="the project's root folder (default: this script's project)")
    args = parser.parse_args()
    root = pathlib.Path(args.root)
    if not root.is_dir():
        print(f"check-layers: '{root}' is not a folder", file=sys.stderr)
        return 2
    errors = check(root)
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        print(f"check-layers: {len(errors)} violation(s)", file=sys.stderr)
        return 1
    print("check-layers: every include points down a layer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
