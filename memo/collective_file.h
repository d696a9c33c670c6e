// The collective memo's tables in a memo file (memo/README.md, "Collective patterns").
#pragma once
#include <hdf5.h>

#include <string>

#include "wormhole/memo/memo_file.h"

namespace wh {

/// Writes db.collectives as the tables /collectives, /collective_keys, /collective_flows,
/// /collective_ports and /collective_qps. Throws std::runtime_error on an HDF5 failure.
void write_collective_tables(hid_t file, const MemoDb& db);
/// Reads them into db.collectives (a file without them holds none). Throws InputError naming `path`
/// (with `fix`) when a row points past its tables, a pattern's namespace is not described, an order is
/// not a permutation of its flows, a completion is negative, or a QP names a flow it does not have.
void read_collective_tables(hid_t file, MemoDb& db, const std::string& path, const std::string& fix);

}  // namespace wh
