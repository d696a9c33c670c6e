#!/usr/bin/python3
"""The docs' commands run as written, and the docs link only to files that exist.

Every ```sh block of README.md and docs/*.md is a command a reader may paste at the repository root
after the build. The blocks of one document run in order (a later block may read an earlier one's
outputs) in a scratch copy of the source tree with the built binaries beside it, so nothing is written
into the checkout. A block preceded by `<!-- doc-test: skip (reason) -->` is not run (it installs
packages, builds, needs a Slurm cluster, or takes minutes); `<!-- doc-test: exit N -->` expects exit
status N (a block that shows an error). Environment: WORMHOLE (the built binary), WH_SOURCE_DIR.
"""
import os
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

SOURCE_DIR = Path(os.environ.get("WH_SOURCE_DIR", Path(__file__).resolve().parents[2]))
WORMHOLE = Path(os.environ.get("WORMHOLE", SOURCE_DIR / "build" / "wormhole"))
DOCS = [SOURCE_DIR / "README.md", *sorted((SOURCE_DIR / "docs").glob("*.md"))]
BLOCK_TIMEOUT_S = 180
FENCE = re.compile(r"^```(\S*)\s*$")
DIRECTIVE = re.compile(r"^<!--\s*doc-test:\s*(skip|exit)\s*(\S*)(.*?)-->\s*$")
# As a user would: mpirun as root (CI) is allowed through Open MPI's own variables, not by editing the command.
ENV = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
       "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMPI_MCA_mpi_yield_when_idle": "1"}
CRASH_MARKERS = ("terminate called", "Segmentation fault", "Aborted", "core dumped", "what():")


def blocks(path):
    """(first line number, language, text, directive, argument) of each fenced block of `path`."""
    out, lang, start, body, directive, arg = [], None, 0, [], None, ""
    pending = (None, "")
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if lang is None:
            m = FENCE.match(line)
            if m:
                lang, start, body = m.group(1), n, []
                directive, arg = pending
                continue
            d = DIRECTIVE.match(line.strip())
            if d:
                pending = (d.group(1), d.group(2))
            elif line.strip():
                pending = (None, "")
        elif FENCE.match(line) and not FENCE.match(line).group(1):
            out.append((start, lang, "\n".join(body), directive, arg))
            lang, pending = None, (None, "")
        else:
            body.append(line)
    return out


def scratch_tree():
    """A copy of the source tree without builds, outputs or git, with build/ pointing at the real build."""
    root = Path(tempfile.mkdtemp(prefix="wh_doc_"))
    tree = root / "wormhole"
    shutil.copytree(SOURCE_DIR, tree, ignore=shutil.ignore_patterns(".git", "build*", "out", "*.h5", "__pycache__"))
    (tree / "build").symlink_to(WORMHOLE.parent)
    return root, tree


class DocCommands(unittest.TestCase):
    def test_sh_blocks_run(self):
        ran = 0
        for doc in DOCS:
            sh = [b for b in blocks(doc) if b[1] == "sh"]
            if not sh:
                continue
            root, tree = scratch_tree()
            try:
                for start, _, text, directive, arg in sh:
                    if directive == "skip":
                        continue
                    want = int(arg) if directive == "exit" else 0
                    with self.subTest(doc=doc.name, line=start):
                        p = subprocess.run(["bash", "-eo", "pipefail", "-c", text], cwd=tree, capture_output=True,
                                           text=True, timeout=BLOCK_TIMEOUT_S, env=ENV)
                        where = f"{doc.relative_to(SOURCE_DIR)}:{start}"
                        self.assertEqual(p.returncode, want, f"{where}: exit {p.returncode}\n{text}\n{p.stdout[-3000:]}"
                                                             f"{p.stderr[-3000:]}")
                        for m in CRASH_MARKERS:
                            self.assertNotIn(m, p.stderr, where)
                        ran += 1
            finally:
                shutil.rmtree(root, ignore_errors=True)
        self.assertGreater(ran, 10)  # the blocks were found at all

    def test_untracked_paths_not_named(self):
        for doc in DOCS:
            text = doc.read_text()
            # (a folder beside the checkout that a user who clones the repository does not have)
            self.assertIsNone(re.search(r"\.\.[/]shared", text), doc)
            self.assertIsNone(re.search(r"\b[Ii]ssue #?\d+", text), f"{doc}: user docs speak of the product, not issues")

    def test_links_resolve(self):
        link = re.compile(r"\]\(([^)#\s]+)(#[^)]*)?\)")
        for doc in DOCS:
            for m in link.finditer(doc.read_text()):
                target = m.group(1)
                if re.match(r"[a-z]+:", target):
                    continue  # https:, mailto:
                self.assertTrue((doc.parent / target).exists(), f"{doc.relative_to(SOURCE_DIR)} links to {target}")


class BlockParser(unittest.TestCase):
    def test_directives_and_languages(self):
        d = Path(tempfile.mkdtemp(prefix="wh_doc_parse_"))
        try:
            f = d / "x.md"
            f.write_text("text\n<!-- doc-test: skip slow -->\n```sh\na\n```\n```text\nout\n```\n"
                         "<!-- doc-test: exit 2 -->\n\n```sh\nb\nc\n```\n```sh\nd\n```\n")
            self.assertEqual(blocks(f), [(3, "sh", "a", "skip", "slow"), (6, "text", "out", None, ""),
                                         (11, "sh", "b\nc", "exit", "2"), (15, "sh", "d", None, "")])
        finally:
            shutil.rmtree(d)


if __name__ == "__main__":
    unittest.main()
