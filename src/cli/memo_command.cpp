// `wormhole memo merge|stats|inspect`: the memo database files (memo/README.md).
#include "memo_command.h"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <numeric>

#include "wormhole/core/input_error.h"
#include "wormhole/memo/memo_file.h"

namespace wh {

namespace {
// The collective patterns, one line each, by namespace and key (the store is unordered): how long the
// collective ran (its last completion after its first issue), the bytes its island's ports sent, hits.
void print_collective_patterns(const MemoDb& db, size_t limit) {
  struct Row {
    uint64_t ns;
    const std::string* key;
    const CollectivePattern* p;
  };
  std::vector<Row> rows;
  for (const auto& [ns, store] : db.collectives)
    for (const auto& [key, p] : store) rows.push_back({ns, &key, &p});
  if (rows.empty()) return;
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.ns != b.ns ? a.ns < b.ns : *a.key < *b.key; });
  // recorded: "exact" (simulated packet for packet) or "skips" (fast-forward skipped part of it).
  fmt::print("collective patterns:\n{:>5} {:>16} {:>6} {:>6} {:>12} {:>14} {:>8} {:>8}\n", "#", "namespace", "flows", "ports",
             "duration_us", "port_bytes", "hits", "recorded");
  for (size_t k = 0; k < rows.size(); ++k) {
    if (limit > 0 && k >= limit) {
      fmt::print("... {} more (--limit 0 lists all)\n", rows.size() - k);
      break;
    }
    const CollectivePattern& p = *rows[k].p;
    const Time duration = p.finish.empty() ? 0 : *std::max_element(p.finish.begin(), p.finish.end());
    const uint64_t bytes = std::accumulate(p.tx_delta.begin(), p.tx_delta.end(), uint64_t(0));
    fmt::print("{:>5} {:016x} {:>6} {:>6} {:>12.3f} {:>14} {:>8} {:>8}\n", k, rows[k].ns, p.finish.size(), p.rr_last.size(),
               double(duration) / kUs, bytes, p.hits, p.approximate() ? "skips" : "exact");
  }
}
}  // namespace


void add_memo_commands(CLI::App& memo, MemoOptions& o) {
  memo.require_subcommand(1);
  CLI::App* merge = memo.add_subcommand("merge", "merge memo files (e.g. one per rank or per run) into one; isomorphic "
                                                 "patterns are kept once with their hits added");
  merge->add_option("inputs", o.inputs, "memo files to merge")->required()->check(CLI::ExistingFile);
  merge->add_option("-o,--output", o.output, "the merged file (replaced if it exists)")->required();
  merge->callback([&o] { o.action = "merge"; });
  CLI::App* stats = memo.add_subcommand("stats", "summarise a memo file: patterns, namespaces, hits, size");
  stats->add_option("file", o.file, "a memo file")->required();
  stats->callback([&o] { o.action = "stats"; });
  CLI::App* inspect = memo.add_subcommand("inspect", "list a memo file's patterns, one line each");
  inspect->add_option("file", o.file, "a memo file")->required();
  inspect->add_option("-n,--limit", o.limit, "at most this many patterns (default 20, 0 = all)");
  inspect->callback([&o] { o.action = "inspect"; });
}

int memo_command(const MemoOptions& o) {
  if (o.action == "merge") {
    // The same file twice would count its hits twice.
    for (size_t i = 0; i < o.inputs.size(); ++i)
      for (size_t j = 0; j < i; ++j) {
        std::error_code ec;
        if (std::filesystem::equivalent(o.inputs[i], o.inputs[j], ec))
          throw InputError(o.inputs[i], 0, "given twice to memo merge (as " + o.inputs[j] + " too)",
                           "list each memo file once");
      }
    const MemoDb db = merge_memo_files(o.inputs);
    write_memo_file(o.output, db);
    fmt::print("{} patterns and {} collective patterns in {} namespaces from {} files -> {}\n", db.store.size(),
               db.collective_patterns(), db.namespaces.size(), o.inputs.size(), o.output);
    return 0;
  }
  const MemoDb db = read_memo_file(o.file);
  const auto entries = db.store.entries();
  if (o.action == "stats") {
    uint64_t hits = 0, vertices = 0, edges = 0, rejected = 0;
    std::map<size_t, size_t> by_size;
    for (const MemoEntry* e : entries) {
      hits += e->hits, vertices += e->key.vertices(), edges += e->key.edges.size(), rejected += e->rejected;
      ++by_size[e->key.vertices()];
    }
    fmt::print("{}: {} patterns, {} flows and {} contention edges in all, {} hits, {} rejected by verify mode (never "
               "replayed), {} bytes on disk; {} collective patterns (below)\n",
               o.file, entries.size(), vertices, edges, hits, rejected, std::filesystem::file_size(o.file),
               db.collective_patterns());
    for (const auto& [h, text] : db.namespaces) fmt::print("namespace {:016x}: {}\n", h, text);
    for (const auto& [n, count] : by_size) fmt::print("  {} patterns of {} flows\n", count, n);
    uint64_t chits = 0, cflows = 0, capprox = 0;
    for (const auto& [h, store] : db.collectives)
      for (const auto& [key, p] : store) chits += p.hits, cflows += p.finish.size(), capprox += p.approximate();
    fmt::print("collective patterns: {} ({} flows in all, {} hits; {} recorded with skips)\n", db.collective_patterns(),
               cflows, chits, capprox);
    return 0;
  }
  // Unsteady periods' patterns first (a file of collective patterns alone has none: no empty table).
  if (!entries.empty() || db.collective_patterns() == 0)
    fmt::print("{:>5} {:>16} {:>6} {:>6} {:>12} {:>8} {:>8}  bytes per flow\n", "#", "namespace", "flows", "edges",
               "duration_us", "hits", "rejected");
  size_t k = 0;
  for (const MemoEntry* e : entries) {
    if (o.limit > 0 && k >= o.limit) {
      fmt::print("... {} more (--limit 0 lists all)\n", entries.size() - k);
      break;
    }
    std::string bytes;
    for (size_t i = 0; i < e->value.bytes.size() && i < 6; ++i) bytes += fmt::format(" {}", e->value.bytes[i]);
    if (e->value.bytes.size() > 6) bytes += " ...";
    fmt::print("{:>5} {:016x} {:>6} {:>6} {:>12.3f} {:>8} {:>8} {}\n", k++, e->ns, e->key.vertices(), e->key.edges.size(),
               double(e->value.duration) / kUs, e->hits, e->rejected ? "yes" : "no", bytes);
  }
  print_collective_patterns(db, o.limit);
  return 0;
}

}  // namespace wh
