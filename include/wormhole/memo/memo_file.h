// Memo files: a MemoStore on disk as HDF5 (layout in memo/README.md), and merging them.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <unordered_map>

#include "wormhole/memo/store.h"
#include "wormhole/net/island.h"

namespace wh {

/// A store and the descriptions of its namespaces (namespace hash -> the settings text it hashes).
struct MemoDb {
  MemoStore store;
  /// Collective memo patterns (wormhole/workload/collective_memo.h): namespace -> key bytes -> pattern.
  std::map<uint64_t, std::unordered_map<std::string, CollectivePattern>> collectives;
  std::map<uint64_t, std::string> namespaces;
  /// Collective patterns over all namespaces that a file written from it holds (those verify mode
  /// rejected are not written).
  size_t collective_patterns() const {
    size_t n = 0;
    for (const auto& [ns, patterns] : collectives)
      for (const auto& [key, p] : patterns) n += !p.rejected;
    return n;
  }
};

/// Writes `db` to `path` (replaced if it exists), CC snapshots included (layout 2, memo/README.md).
/// Throws InputError if the file cannot be created, std::runtime_error on an HDF5 failure.
void write_memo_file(const std::string& path, const MemoDb& db);

/// Reads a memo file. Throws InputError naming the file when it is not HDF5, not a wormhole memo
/// file (a results file, another program's), of another layout version, or inconsistent (a table
/// missing, offsets out of range, an entry whose namespace is not described, /cc rows not one per
/// vertex, an unknown CC kind).
MemoDb read_memo_file(const std::string& path);

/// Reads `path` to warm-start a run whose namespace is `ns`, described by `description`, and whose
/// QPs carry CcState alternative `cc_kind` (cc_state_kind; `cc_name`, e.g. "CC_MODE 3", names that
/// CC in messages). Every entry comes back visible from
/// time 0 with its hit count reset (the run's own file counts its own hits, so merging it with
/// `path` does not count them twice); entries of other namespaces are kept, unused. `*ours` (if
/// given) = the number of entries of `ns` (0 is valid: the earlier runs found no pattern).
/// A distributed run's rank `rank` of `ranks` keeps only its shard's entries (MemoStore::keep_shard), while
/// `*ours` and may_hold count them all.
/// Throws InputError naming the file as read_memo_file does, and when the file does not describe
/// `ns` by exactly `description` (the message names the first setting that differs from the
/// closest namespace it holds) or holds a CC state of another kind under `ns` (corrupt).
MemoDb read_warm_start_file(const std::string& path, uint64_t ns, const std::string& description, size_t cc_kind,
                            const std::string& cc_name, size_t* ours = nullptr, uint32_t rank = 0, uint32_t ranks = 1);

/// Merges files into one database: entries whose keys are isomorphic (same namespace) are kept
/// once — the first file's value, with the hits of all — and namespaces are united. Throws
/// InputError for a bad file, or for one namespace hash described differently in two files.
MemoDb merge_memo_files(const std::vector<std::string>& paths);

}  // namespace wh
