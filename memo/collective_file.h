// The collective memo's tables in a memo file (memo/README.md, "Collective patterns").
#pragma once
#include <hdf5.h>

#include <string>
#include <unordered_map>

#include "wormhole/memo/memo_file.h"

namespace wh {

/// Writes db.collectives as the tables /collectives, /collective_keys, /collective_flows,
/// /collective_ports, /collective_qps, /collective_shared and /collective_skips. Throws
/// std::runtime_error on an HDF5 failure.
void write_collective_tables(hid_t file, const MemoDb& db);
/// Reads them into db.collectives (a file without them holds none; patterns of keys already there are
/// merged, add_collective_pattern). Throws InputError naming `path` (with `fix`) when a row points past its
/// tables, a pattern's namespace is not described, an order is not a permutation of its flows, a
/// completion is negative, a QP names a flow it does not have, or skip rows are out of range.
void read_collective_tables(hid_t file, MemoDb& db, const std::string& path, const std::string& fix);
/// Adds pattern `p` of `key` to `store`. Where the key has one already, the one held to the tighter error
/// bound is kept (an exact one first; on a tie the one there), with the hits of both and the larger
/// shared-buffer peak.
void add_collective_pattern(std::unordered_map<std::string, CollectivePattern>& store, const std::string& key,
                            const CollectivePattern& p);

}  // namespace wh
