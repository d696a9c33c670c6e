// Monitors and the packet trace (docs/network-model.md §5.3, §5.4, §5.6): they read the network's
// state at sample instants or at packet events and write files; they change no result.
//  * QlenMonitor: the reference's qlen.txt (QLEN_MON_FILE, QLEN_MON_START, QLEN_MON_END).
//  * PortMonitor (wormhole/io/port_monitor.h): monitor.h5, per-port time series of utilisation, queue,
//    PFC-paused time and Wormhole's frozen state (PORT_MON, PORT_MON_INTERVAL, PORT_MON_START, PORT_MON_END,
//    PORT_MON_NODES).
// In a distributed run each rank samples and traces its own nodes (the network's owns_node) and keeps
// what it found for rank 0 to gather and write in one process's order (src/cli/monitor_exchange.cpp).
//  * TraceWriter: the packet trace of TRACE_FILE's nodes (ENABLE_TRACE, TRACE_OUTPUT_FILE).
#pragma once
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "wormhole/core/event.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/io/port_monitor.h"
#include "wormhole/net/network.h"
#include "wormhole/net/probe.h"

namespace wh {

/// Opens a monitor's output file `path` with fopen `mode`. Throws InputError naming `config_file`, the
/// setting `key` and the reason (e.g. a missing folder) if it cannot be created.
FILE* create_monitor_file(const std::string& path, const std::string& config_file, const char* key, const char* mode);

/// The reference's queue-length histograms (HPCC ns-3 scratch/third.cc, monitor_buffer): every 100 ns
/// from START to the first sample at or past END (all ns, absolute), each switch port's egress bytes
/// (classes 1-7; control packets are not counted) fall in a 1000-B bucket; at every sample whose time
/// is a multiple of 100 ms a block "time: <ns>" is printed, then one line "<switch> <if> c0 c1 ..." per
/// switch port (switches, then ports ascending) with the cumulative counts up to its highest non-empty
/// bucket. A sample sees the queues after every event before its instant. Only the switch ports of nodes
/// the network owns are counted (every one in one process).
class QlenMonitor final : public SampleHook {
 public:
  /// One rank's share of a dump: the lines of its ports ("<switch> <if> c0 c1 ...\n"), ascending.
  struct Dump {
    uint64_t time_ns;
    std::vector<uint32_t> ports;  ///< global port ids, one per line
    std::vector<std::string> lines;
  };
  /// Opens `path` (InputError naming `config_file` and the key if it cannot be created; "" = no file,
  /// a distributed run's other ranks). `deferred`: dumps are kept in dumps() for the caller to merge and
  /// write (write_dump), and what each sample adds is kept until commit() so drop_after() can take it back.
  QlenMonitor(const Network& net, const std::string& path, uint64_t start_ns, uint64_t end_ns,
              const std::string& config_file, bool deferred = false);
  ~QlenMonitor() override;
  /// The first sample's instant (ps).
  Time first() const;
  Time sample(Time t) override;
  /// Takes the samples up to `end` (ps: the run's end; its state holds from the last event on) and
  /// closes the file. Throws OutputError if it cannot be written.
  void finish(Time end);
  /// Closes the file (if any). Throws OutputError if it cannot be written.
  void close();
  const std::string& path() const { return path_; }
  /// Blocks written to the file so far (a distributed run's: rank 0's, which writes them all).
  uint64_t blocks_written() const { return written_; }
  /// The first multiple of 100 ms at or after START (ps): when a block is written if a sample falls on it.
  Time first_mark() const;
  /// The instant (ps) of the first block it would write: first_mark() if it is among its samples
  /// (START + k·100 ns before END); kTimeMax when it is not (START not a multiple of 100 ns, or END
  /// before the mark).
  Time first_block() const;

  // --- deferred (a distributed run) ---
  /// Dumps taken and not yet handed to rank 0.
  std::vector<Dump>& dumps() { return dumps_; }
  /// Writes one whole dump: its "time:" line, then `body` (every port's line, in print order).
  void write_dump(uint64_t time_ns, const std::string& body);
  /// Drops the dumps after `end` (ps) and takes none after it from then on (a distributed run's ranks
  /// run past the event that stopped the run before they learn of it). The samples after `end` count
  /// only toward those dumps.
  void drop_after(Time end);

 private:
  void add(uint64_t samples);
  void dump(uint64_t time_ns);
  void write(const std::string& s);
  const Network& net_;
  std::string path_;
  FILE* f_ = nullptr;
  uint64_t start_ns_, count_;  // sample k is at start + 100 k ns, k < count_
  uint64_t next_ = 0;          // the next sample's index
  uint64_t written_ = 0;       // blocks written
  uint64_t samples_ = 0;       // samples START and END allow (count_ before a stop took some back)
  std::vector<uint32_t> ports_;              // switch ports, in print order
  std::vector<std::vector<uint32_t>> hist_;  // per port: samples per 1000-B bucket
  bool deferred_;
  std::vector<Dump> dumps_;
};

/// Several hooks behind the network's one sampler.
class SampleMux final : public SampleHook {
 public:
  void add(SampleHook* h, Time first) { hooks_.push_back({h, first}); }
  Time first() const;
  Time sample(Time t) override;

 private:
  struct Entry {
    SampleHook* hook;
    Time due;
  };
  std::vector<Entry> hooks_;
};

/// One record of the packet trace, 48 bytes little-endian (docs/network-model.md §5.4).
struct TraceRecord {
  int64_t time_ps;
  uint64_t seq;       ///< data: first payload byte; ACK/NACK: next expected byte; PFC: 0
  uint32_t flow;      ///< /flows row; UINT32_MAX for a PFC frame
  uint32_t node;
  uint32_t port;      ///< global port id
  uint32_t qlen;      ///< bytes in the port's egress queue of the packet's class (Enqu: after, Dequ: after; else 0)
  uint32_t size;      ///< wire bytes
  uint32_t payload;   ///< payload bytes (data)
  uint16_t if_index;  ///< the port's interface on its node (1-based)
  uint8_t event;      ///< TraceEvent: 0 Recv, 1 Enqu, 2 Dequ, 3 Drop
  uint8_t type;       ///< 0 data, 1 ACK, 2 NACK, 3 PFC
  uint8_t cls;        ///< priority class; a PFC frame's: the class it pauses or resumes
  uint8_t flags;      ///< bit 0 ECN CE; bit 1 CNP echo (ACK/NACK); bit 2 sent after a timeout; bit 3 PFC PAUSE; bits 4-5 drop cause
  uint8_t node_type;  ///< 0 host, 1 switch
  uint8_t reserved;
};
static_assert(sizeof(TraceRecord) == 48, "the trace record is 48 bytes on disk");

/// A trace record with the event that made it (a distributed run): sorting by the event — a barrier's
/// records before the events of its instant — merges the ranks' records into one process's order.
struct TaggedTrace {
  Event at;           ///< the running event; at a barrier, its time and as key Network::ports_evacuated()
  uint64_t exec;      ///< the event's execution number on its rank (ClientClock::after_stop)
  uint32_t barrier;   ///< 1: made by a barrier's work (a Wormhole tick), not by an event
  uint32_t rank;      ///< the rank that made it (set when gathered)
  TraceRecord rec;
};
static_assert(sizeof(TaggedTrace) == 88);

/// Writes the packet trace: a 64-byte header ("WHTRACE1", u32 version 1, u32 record size 48, u64
/// nodes, u64 ports, u64 records — written at close, 0 if the run did not end —, 24 bytes 0), then one
/// TraceRecord per event of a traced node.
class TraceWriter final : public PacketTrace {
 public:
  /// Opens `path` (InputError naming `config_file` if it cannot be created; "" = no file, a distributed
  /// run's other ranks). `nodes`: the node ids to trace (TRACE_FILE's, those below the node count).
  /// `deferred`: the records of this rank's nodes are kept in tagged() for the caller to merge and write
  /// (append); else they are written as they come.
  TraceWriter(const Network& net, const std::string& path, const std::vector<uint32_t>& nodes,
              const std::string& config_file, bool deferred = false);
  ~TraceWriter() override;
  bool traces(uint32_t node) const override { return node < traced_.size() && traced_[node]; }
  void event(Time t, TraceEvent ev, uint32_t port, const Packet& p, uint64_t qlen, uint8_t cause) override;
  /// Writes the rest and the header's record count, closes. Throws OutputError on a write error.
  void finish();
  uint64_t records() const { return records_; }
  const std::string& path() const { return path_; }
  /// Deferred: this rank's records not yet handed over, in the order its events ran.
  std::vector<TaggedTrace>& tagged() { return tagged_; }
  const std::vector<TaggedTrace>& tagged() const { return tagged_; }
  /// Writes `n` records (merged from every rank) after those written so far.
  void append(const TraceRecord* r, size_t n);

 private:
  void flush();
  const Network& net_;
  std::string path_;
  FILE* f_ = nullptr;
  std::vector<uint8_t> traced_;
  std::vector<TraceRecord> buf_;
  bool deferred_;
  std::vector<TaggedTrace> tagged_;
  uint64_t records_ = 0;
  long committed_ = 0;  // bytes of whole records on disk
};

/// One flow of a trace estimate: its data packets, sender and receiver host.
struct TraceFlow {
  uint64_t packets = 0;
  uint32_t src = 0, dst = 0;
};

/// Estimated records of a trace of `nodes` for `flows`: per data packet a Dequ at the sending host
/// and a Recv at the receiving one; per ACK an Enqu and a Dequ at the receiving host and a Recv at
/// the sender; Recv, Enqu and Dequ at every traced switch on the way, each way. A flow's switches
/// are those of one of its shortest paths (the ECMP choice at each hop by a hash of the flow and
/// the hop, so that over many flows every path is taken about as often as the switches' hashes
/// take it). Routes are built if they were not.
uint64_t estimate_trace_records(Network& net, const std::vector<uint32_t>& nodes, const std::vector<TraceFlow>& flows);

}  // namespace wh
