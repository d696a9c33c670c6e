#!/usr/bin/python3
"""The rooms' arrows: every `#include "wormhole/<room>/..."` of a library's sources and public headers
names a room that library links (directly or through the rooms it links), as CMakeLists.txt declares
them. A header-only arrow the linker cannot see (the model including a reader's header, say) fails
here instead of going unnoticed."""
import os
import re
import unittest
from pathlib import Path

SOURCE_DIR = Path(os.environ.get("WH_SOURCE_DIR", Path(__file__).resolve().parents[2]))

# Header folders each library owns: config/ holds plain settings values and goes with core.
HEADER_ROOMS = {"wh_core": ["core", "config"]}
# Arrows the link graph does not show, each with its reason.
ALLOWED = {
    # A QP keeps its CC state inline (net/flow.h): the state structs are plain values; the algorithms
    # that change them live in wh_cc, which links wh_net.
    ("wh_net", "cc/state.h"),
}


def link_graph(cmake_text):
    """(room name -> its source folder, room name -> the wh_* libraries it links)."""
    folders = dict(re.findall(r"wh_room\((wh_\w+)\s+([\w/]+)\)", cmake_text))
    links = {name: set() for name in folders}
    for name, args in re.findall(r"target_link_libraries\((wh_\w+)\s+([^)]*)\)", cmake_text):
        links.setdefault(name, set()).update(a for a in args.split() if a.startswith("wh_") and a in folders)
    return folders, links


def closure(links, name):
    seen, todo = set(), [name]
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo.extend(links.get(n, ()))
    return seen


def header_rooms(name, folder):
    return HEADER_ROOMS.get(name, [Path(folder).name])


class Layering(unittest.TestCase):
    def test_graph_is_read(self):
        folders, links = link_graph((SOURCE_DIR / "CMakeLists.txt").read_text())
        self.assertEqual(folders["wh_net"], "src/net")
        self.assertEqual(links["wh_workload"], {"wh_net"})  # its readers use only core's lexer and errors
        self.assertIn("wh_core", closure(links, "wh_scenario"))
        # The model (and core) reach no reader, writer, generator, scenario, memo file or rank map.
        for model in ("wh_core", "wh_net", "wh_cc", "wh_ffwd", "wh_workload"):
            self.assertEqual(closure(links, model) & {"wh_io", "wh_topo", "wh_scenario", "wh_memo", "wh_partition"},
                             set(), model)

    def test_includes_follow_the_link_graph(self):
        folders, links = link_graph((SOURCE_DIR / "CMakeLists.txt").read_text())
        owner = {room: name for name, folder in folders.items() for room in header_rooms(name, folder)}
        bad = []
        for name, folder in folders.items():
            reach = {room for dep in closure(links, name) for room in header_rooms(dep, folders[dep])}
            files = [p for p in (SOURCE_DIR / folder).rglob("*") if p.suffix in (".h", ".cpp")]
            for room in header_rooms(name, folder):
                files += [p for p in (SOURCE_DIR / "include" / "wormhole" / room).glob("*.h")]
            for p in files:
                for n, line in enumerate(p.read_text().splitlines(), 1):
                    m = re.match(r'#include "wormhole/(\w+)/([\w./]+)"', line)
                    if not m or m.group(1) in reach or (name, f"{m.group(1)}/{m.group(2)}") in ALLOWED:
                        continue
                    bad.append(f"{p.relative_to(SOURCE_DIR)}:{n}: {name} includes {m.group(1)}/{m.group(2)} "
                               f"but does not link {owner.get(m.group(1), '?')}")
        self.assertEqual(bad, [], "\n".join(bad))

    def test_an_arrow_against_the_graph_is_caught(self):
        # The check itself: with wh_workload linking only wh_core, its include of net/ is reported.
        cmake = "wh_room(wh_core src/core)\nwh_room(wh_net src/net)\nwh_room(wh_workload src/workload)\n" \
                "target_link_libraries(wh_net PUBLIC wh_core)\ntarget_link_libraries(wh_workload PUBLIC wh_core)\n"
        folders, links = link_graph(cmake)
        reach = {room for dep in closure(links, "wh_workload") for room in header_rooms(dep, folders[dep])}
        self.assertEqual(reach, {"core", "config", "workload"})
        self.assertNotIn("net", reach)


if __name__ == "__main__":
    unittest.main()
