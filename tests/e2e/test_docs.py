#!/usr/bin/python3
"""The docs' commands run as written, their links resolve, and nothing tracked reaches outside the repository.

Every ```sh and ```python block of README.md and docs/*.md is something a reader may paste at the repository
root after the build. The blocks of one document run in order (a later block may read an earlier one's
outputs) in a scratch copy of the source tree with the built binaries beside it, so nothing is written into
the checkout; a block may create files under out/ only, and must change no file of the tree. A block
preceded by `<!-- doc-test: skip (reason) -->` is not run (it installs packages, builds, needs a Slurm
cluster, or takes minutes); `<!-- doc-test: exit N -->` expects exit status N (a block that shows an
error). sh blocks run under `bash -e -o pipefail`, so write a check as a plain command or as the last line
(`cmp a b && echo same` mid-block would not fail the block). Environment: WORMHOLE (the built binary),
WH_SOURCE_DIR.
"""
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

SOURCE_DIR = Path(os.environ.get("WH_SOURCE_DIR", Path(__file__).resolve().parents[2]))
WORMHOLE = Path(os.environ.get("WORMHOLE", SOURCE_DIR / "build" / "wormhole"))
RUN_DOCS = [SOURCE_DIR / "README.md", *sorted((SOURCE_DIR / "docs").glob("*.md"))]
LINK_DOCS = RUN_DOCS + [SOURCE_DIR / p for p in ("tests/data/README.md", "inputs/README.md", "memo/README.md",
                                                  "partition/README.md")]
BLOCK_TIMEOUT_S = 180
FENCE = re.compile(r"^```(\S*)\s*$")
DIRECTIVE = re.compile(r"^<!--\s*doc-test:\s*(skip|exit)\s*(\S*)(.*?)-->\s*$")
CRASH_MARKERS = ("terminate called", "Segmentation fault", "Aborted", "core dumped", "what():")
# As a user would: mpirun as root (CI) is allowed through Open MPI's own variables, not by editing the command.
ENV = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
       "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMPI_MCA_mpi_yield_when_idle": "1"}
IGNORED = shutil.ignore_patterns(".git", "build*", "out", "*.h5", "__pycache__")
# Paths that only exist on the development machine: a folder beside the checkout, its absolute home.
OUTSIDE = [re.compile(r"\.\.[/]shared\b"), re.compile(r"/wor[k]/"), re.compile(r"/hom[e]/\w")]


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


def slug(heading):
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path):
    text = path.read_text()
    found = {slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, re.M)}
    return found | set(re.findall(r'<a id="([^"]+)"', text))


def tree_files(root):
    """Relative path -> SHA-256 of every file under `root` (the build symlink and outputs left out)."""
    out = {}
    for p in root.rglob("*"):
        rel = p.relative_to(root)
        if rel.parts[0] in ("build", "out") or not p.is_file():
            continue
        out[str(rel)] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def tracked_files():
    """Every file of the source tree a clone has: git's list, or the tree itself outside a checkout (CI's copy)."""
    try:
        names = subprocess.run(["git", "-C", str(SOURCE_DIR), "ls-files"], capture_output=True, text=True,
                               check=True).stdout.split("\n")
        return [SOURCE_DIR / n for n in names if n]
    except (subprocess.CalledProcessError, FileNotFoundError):
        skip = {".git", "out", "__pycache__"}
        return [p for p in SOURCE_DIR.rglob("*") if p.is_file() and not skip & set(p.relative_to(SOURCE_DIR).parts)
                and not p.relative_to(SOURCE_DIR).parts[0].startswith("build")]


class DocCommands(unittest.TestCase):
    def test_blocks_run(self):
        ran = 0
        for doc in RUN_DOCS:
            runnable = [b for b in blocks(doc) if b[1] in ("sh", "python")]
            if not runnable:
                continue
            root = Path(tempfile.mkdtemp(prefix="wh_doc_"))
            tree = root / "wormhole"
            shutil.copytree(SOURCE_DIR, tree, ignore=IGNORED)
            (tree / "build").symlink_to(WORMHOLE.parent)
            before = tree_files(tree)
            try:
                for start, lang, text, directive, arg in runnable:
                    if directive == "skip":
                        continue
                    want = int(arg) if directive == "exit" else 0
                    where = f"{doc.relative_to(SOURCE_DIR)}:{start}"
                    with self.subTest(block=where):
                        cmd = ["bash", "-eo", "pipefail", "-c", text] if lang == "sh" else ["/usr/bin/python3", "-c", text]
                        p = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S,
                                           env=ENV)
                        self.assertEqual(p.returncode, want, f"{where}: exit {p.returncode}\n{text}\n{p.stdout[-3000:]}"
                                                             f"{p.stderr[-3000:]}")
                        for m in CRASH_MARKERS:
                            self.assertNotIn(m, p.stderr, where)
                        after = tree_files(tree)
                        changed = sorted(f for f in before if after.get(f) != before[f])
                        added = sorted(set(after) - set(before))
                        self.assertEqual(changed, [], f"{where} changed or removed files of the tree")
                        self.assertEqual(added, [], f"{where} wrote files outside out/")
                        ran += 1
            finally:
                shutil.rmtree(root, ignore_errors=True)
        self.assertGreater(ran, 10)  # the blocks were found at all

    def test_docs_speak_of_the_product(self):
        for doc in LINK_DOCS:
            text = doc.read_text()
            self.assertIsNone(re.search(r"\b[Ii]ssue #?\d+", text), f"{doc}: user docs speak of the product, not issues")

    def test_nothing_tracked_reaches_outside(self):
        self_path = Path(__file__).resolve()
        for f in tracked_files():
            if f.resolve() == self_path or f.suffix in (".png", ".h5"):
                continue
            try:
                text = f.read_text()
            except (UnicodeDecodeError, FileNotFoundError):
                continue
            for pattern in OUTSIDE:
                m = pattern.search(text)
                self.assertIsNone(m, f"{f.relative_to(SOURCE_DIR)} names {m and m.group(0)!r}, "
                                     "a path a clone of the repository does not have")

    def test_links_resolve(self):
        link = re.compile(r"\]\(([^)#\s]*)(#[^)\s]*)?\)")
        for doc in LINK_DOCS:
            for m in link.finditer(doc.read_text()):
                target, anchor = m.group(1), m.group(2)
                if re.match(r"[a-z]+:", target):
                    continue  # https:, mailto:
                path = (doc.parent / target) if target else doc
                where = f"{doc.relative_to(SOURCE_DIR)} -> {target}{anchor or ''}"
                self.assertTrue(path.exists(), where)
                if anchor and path.suffix == ".md":
                    self.assertIn(anchor[1:], anchors(path), where)


class Parsers(unittest.TestCase):
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

    def test_slugs(self):
        self.assertEqual(slug("HDF5 results (`results.h5`)"), "hdf5-results-resultsh5")
        self.assertEqual(slug("11.3 ECN"), "113-ecn")
        self.assertEqual(slug("Wormhole: accuracy and speed"), "wormhole-accuracy-and-speed")
        self.assertEqual(slug("Analysing results (`scripts/wh_analyze.py`)"), "analysing-results-scriptswh_analyzepy")


if __name__ == "__main__":
    unittest.main()
