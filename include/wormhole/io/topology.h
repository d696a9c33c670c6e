// The HPCC topology.txt (docs/network-model.md §2): nodes, switches and full-duplex links.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "wormhole/core/input_text.h"
#include "wormhole/net/topology.h"

namespace wh {

/// How a topology reader names its endpoints in messages (topology.txt: hosts; SimAI: GPUs).
struct LinkLineStyle {
  const char* hosts;     ///< plural noun for non-switch nodes, e.g. "hosts"
  const char* line_fix;  ///< fix for a malformed line, with an example line
};

/// Parses one link line "a b rate delay error_rate" (the five tokens at `f`) of a topology whose
/// node count and switch flags are already in `t`: rate in bit/s (> 0), delay in ps (>= 0),
/// error rate in [0, 1). A link may join two hosts (a direct GPU–GPU link); hosts still never
/// forward, so it carries only the traffic between those two. Throws InputError(path, token line,
/// ...) for a bad endpoint, a self-link, or a bad rate, delay or error rate.
TopoLink parse_link_line(const std::string& path, const InputToken* f, const Topology& t, const LinkLineStyle& style);

/// Reads the `count` link lines that start at toks[i] into t.links (parse_link_line each), moving i
/// past them. Returns the token index of the first link read over more than one line (SIZE_MAX: none),
/// for a caller that reads on: an error after it is reported at its line (rethrow_at_record_line),
/// where a field is missing. Throws InputError: parse_link_line's, at that line when one ran over
/// lines; when the file ends first, naming `header_line` and saying to set `count_key`.
size_t read_link_lines(const std::string& path, const std::vector<InputToken>& toks, size_t& i, uint64_t count,
                       int header_line, const char* count_key, Topology& t, const LinkLineStyle& style);

/// Reads topology.txt. Only the first L link lines are read; text after them is ignored.
/// Throws InputError (file, line, fix) for: a malformed header or line, a switch id out of range
/// or repeated, a link endpoint out of range, a self-link, a bad rate,
/// delay or error rate, fewer link lines than declared, and a host with no link.
Topology read_topology(const std::string& path);

}  // namespace wh
