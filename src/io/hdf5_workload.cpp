// results.h5's training reports (docs/results.md): /workload, the tables a workload's CSVs hold
// (write_workload_csvs) with times in whole ps, and /jobs, one such group per job of a run of several
// jobs. Shared by the serial and the collective writer (hdf5_results_layout.h).
#include <hdf5.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "wormhole/io/hdf5_util.h"
#include "wormhole/io/results_writer.h"
#include "wormhole/io/workload_results.h"
#include "hdf5_results_layout.h"

namespace wh {

namespace {

using namespace h5;

// /workload: the same tables as the workload CSVs (write_workload_csvs), with times in whole ps
// (the simulator's unit, so nothing is rounded) and strings as variable-length UTF-8 (but
// /workload/flows's, one row per flow, fixed-length). The row structs hold pointers into the
// report's strings, which outlive the H5Dwrite.
struct IterationRow {
  uint32_t index;
  int64_t start_ps, end_ps, time_ps;
  uint8_t complete;
};

struct PhaseCols {
  int64_t compute_ps, comm_ps, exposed_ps;
  uint64_t bytes;
  const char* op;
  uint32_t ranks;
  double algbw, busbw;
};
struct LayerRow {
  uint32_t iteration, layer;
  const char* name;
  std::array<PhaseCols, 3> phase;  // indexed by Phase
  int64_t finished_ps;
};

struct CollectiveRow {
  uint32_t iteration, layer;
  const char* layer_name;
  const char* phase;
  const char* op;
  const char* group;
  uint32_t group_first, ranks;
  uint64_t bytes;
  uint32_t flows;
  uint64_t flow_bytes;
  int64_t start_ps, end_ps, duration_ps;
  double algbw, busbw;
  uint64_t nvlink_bytes, nic_bytes, fabric_hop_bytes;
};

struct GpuRow {
  uint32_t gpu;
  int64_t compute_ps, exposed_ps, exposed_tp_ps, exposed_dp_ps, exposed_ep_ps, exposed_dp_ep_ps, exposed_pp_ps, bubble_ps,
      update_ps, finish_ps;
};

void write_iterations(hid_t group, const std::vector<IterationRecord>& its, const std::string& where) {
  const auto types = compound(sizeof(IterationRow), {
      Field{"index", HOFFSET(IterationRow, index), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"start_ps", HOFFSET(IterationRow, start_ps), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"end_ps", HOFFSET(IterationRow, end_ps), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"time_ps", HOFFSET(IterationRow, time_ps), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"complete", HOFFSET(IterationRow, complete), H5T_NATIVE_UINT8, H5T_STD_U8LE},
  });
  std::vector<IterationRow> rows;
  rows.reserve(its.size());
  for (const IterationRecord& it : its) rows.push_back({it.index, it.start, it.end, it.end - it.start, static_cast<uint8_t>(it.complete)});
  write_table(group, "iterations", types, rows.data(), rows.size(),
              "index: 0-based iteration; start_ps, end_ps, time_ps: ps; complete: 0/1",
              "one row per iteration: from the run's start (iteration 0) or the previous iteration's end "
              "to when every GPU completed all of the iteration's compute and collectives; "
              "time_ps = end_ps - start_ps; complete 0: the run stopped in it (end_ps is the last thing that finished)",
              where);
}

void write_layers(hid_t group, const std::vector<LayerRecord>& layers, const std::string& where) {
  const Handle str = string_type();
  // Field names must outlive compound(); reserve() keeps the c_str() pointers stable.
  std::vector<std::string> names;
  names.reserve(3 * 8);
  std::vector<Field> fields = {
      Field{"iteration", HOFFSET(LayerRow, iteration), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"layer", HOFFSET(LayerRow, layer), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"name", HOFFSET(LayerRow, name), str, str},
  };
  for (size_t p = 0; p < 3; ++p) {
    const size_t base = offsetof(LayerRow, phase) + p * sizeof(PhaseCols);
    const auto add = [&](const char* col, size_t off, hid_t mem, hid_t file) {
      names.push_back(std::string(kPhaseName[p]) + "_" + col);
      fields.push_back(Field{names.back().c_str(), base + off, mem, file});
    };
    add("compute_ps", offsetof(PhaseCols, compute_ps), H5T_NATIVE_INT64, H5T_STD_I64LE);
    add("comm_ps", offsetof(PhaseCols, comm_ps), H5T_NATIVE_INT64, H5T_STD_I64LE);
    add("exposed_ps", offsetof(PhaseCols, exposed_ps), H5T_NATIVE_INT64, H5T_STD_I64LE);
    add("bytes", offsetof(PhaseCols, bytes), H5T_NATIVE_UINT64, H5T_STD_U64LE);
    add("op", offsetof(PhaseCols, op), str, str);
    add("ranks", offsetof(PhaseCols, ranks), H5T_NATIVE_UINT32, H5T_STD_U32LE);
    add("algbw_GiBps", offsetof(PhaseCols, algbw), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE);
    add("busbw_GiBps", offsetof(PhaseCols, busbw), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE);
  }
  fields.push_back(Field{"finished_ps", HOFFSET(LayerRow, finished_ps), H5T_NATIVE_INT64, H5T_STD_I64LE});
  const auto types = compound(sizeof(LayerRow), fields);

  std::vector<LayerRow> rows;
  rows.reserve(layers.size());
  for (const LayerRecord& l : layers) {
    LayerRow row{l.iteration, l.layer, l.name.c_str(), {}, l.finished};
    for (size_t p = 0; p < 3; ++p) {
      row.phase[p] = {l.compute[p], l.comm[p],    l.exposed[p], l.bytes[p], l.op[p].c_str(), l.ranks[p],
                      l.algbw_gibps(Phase(p)), l.busbw_gibps(Phase(p))};
    }
    rows.push_back(row);
  }
  write_table(group, "layers", types, rows.data(), rows.size(),
              "iteration: 0-based; layer: 0-based row of the workload file; <phase>_compute_ps, "
              "<phase>_comm_ps, <phase>_exposed_ps, finished_ps: ps; <phase>_bytes: bytes per rank; "
              "<phase>_ranks: group size; <phase>_algbw_GiBps, <phase>_busbw_GiBps: GiB/s (2^30 B/s); "
              "<phase>: fwd, ig, wg",
              "one row per workload row per iteration, seen from the reporting GPU (SimAI's detailed "
              "report): compute from the workload file, comm from issue to completion at that GPU, "
              "exposed the time it was blocked on the collective; <phase>_op is \"\" and the comm "
              "fields 0 when the phase has no collective",
              where);
}

void write_collectives(hid_t group, const std::vector<CollectiveRecord>& cs, const std::string& where) {
  const Handle str = string_type();
  const auto types = compound(sizeof(CollectiveRow), {
      Field{"iteration", HOFFSET(CollectiveRow, iteration), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"layer", HOFFSET(CollectiveRow, layer), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"layer_name", HOFFSET(CollectiveRow, layer_name), str, str},
      Field{"phase", HOFFSET(CollectiveRow, phase), str, str},
      Field{"op", HOFFSET(CollectiveRow, op), str, str},
      Field{"group", HOFFSET(CollectiveRow, group), str, str},
      Field{"group_first", HOFFSET(CollectiveRow, group_first), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"ranks", HOFFSET(CollectiveRow, ranks), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"bytes", HOFFSET(CollectiveRow, bytes), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"flows", HOFFSET(CollectiveRow, flows), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"flow_bytes", HOFFSET(CollectiveRow, flow_bytes), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"start_ps", HOFFSET(CollectiveRow, start_ps), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"end_ps", HOFFSET(CollectiveRow, end_ps), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"duration_ps", HOFFSET(CollectiveRow, duration_ps), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"algbw_GiBps", HOFFSET(CollectiveRow, algbw), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE},
      Field{"busbw_GiBps", HOFFSET(CollectiveRow, busbw), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE},
      Field{"nvlink_bytes", HOFFSET(CollectiveRow, nvlink_bytes), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"nic_bytes", HOFFSET(CollectiveRow, nic_bytes), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"fabric_hop_bytes", HOFFSET(CollectiveRow, fabric_hop_bytes), H5T_NATIVE_UINT64, H5T_STD_U64LE},
  });
  std::vector<CollectiveRow> rows;
  rows.reserve(cs.size());
  for (const CollectiveRecord& c : cs) {
    rows.push_back({c.iteration, c.layer, c.layer_name.c_str(), kPhaseName[size_t(c.phase)], c.op.c_str(),
                    c.group.c_str(), c.group_first, c.ranks, c.bytes, c.flows, c.flow_bytes, c.start, c.end,
                    c.end - c.start, c.algbw_gibps(), c.busbw_gibps(), c.nvlink_bytes, c.nic_bytes,
                    c.fabric_hop_bytes});
  }
  write_table(group, "collectives", types, rows.data(), rows.size(),
              "iteration: 0-based; layer: 0-based workload row; group_first: GPU id; ranks: group size; "
              "bytes: per-rank size; flow_bytes: bytes; start_ps, end_ps, duration_ps: ps; algbw_GiBps, "
              "busbw_GiBps: GiB/s (2^30 B/s); nvlink_bytes, nic_bytes, fabric_hop_bytes: bytes",
              "one row per collective (all ranks of one group) in order of first issue: phase fwd/ig/wg, "
              "op AllReduce/AllGather/ReduceScatter/AllToAll (SendRecv: a pipeline transfer, group PP, or a "
              "Chakra trace's send, group P2P), group TP/DP/EP/DP_EP/None (a Chakra trace: its pg_name); start = first "
              "rank issued it, end = last rank saw it complete; flows = 0 means it completed at once; "
              "nvlink_bytes / nic_bytes: bytes of its finished flows that went GPU-NVSwitch-GPU / out of "
              "the GPU's NIC, fabric_hop_bytes: their bytes times the switch-to-switch links they crossed",
              where);
}

void write_flow_tags(hid_t group, const WorkloadReport& w, const std::string& where) {
  // phase and group as fixed-length strings as wide as the longest value: a row is then plain bytes
  // (variable-length strings took two heap objects per row: 75 B a flow more, a third of GPT-7B's file).
  size_t phase_w = 1, group_w = 1;
  for (const CollectiveRecord& c : w.collectives) {
    phase_w = std::max(phase_w, std::strlen(kPhaseName[size_t(c.phase)]));
    group_w = std::max(group_w, c.group.size());
  }
  const Handle phase_t = fixed_string_type(phase_w), group_t = fixed_string_type(group_w);
  const size_t at_phase = 4 * sizeof(uint32_t), at_group = at_phase + phase_w;
  // Rows packed in memory as in the file (filled by memcpy): HDF5 then copies them unconverted.
  const size_t at_ints = at_group + group_w, row = at_ints + 4 * sizeof(uint32_t);
  const auto types = compound(row, {
      Field{"flow", 0, H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"collective", 4, H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"iteration", 8, H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"layer", 12, H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"phase", at_phase, phase_t, phase_t},
      Field{"group", at_group, group_t, group_t},
      Field{"ring", at_ints, H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"step", at_ints + 4, H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"src_gpu", at_ints + 8, H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"dst_gpu", at_ints + 12, H5T_NATIVE_UINT32, H5T_STD_U32LE},
  });
  auto fill = [&](size_t first, size_t count, void* buf) {
    std::memset(buf, 0, count * row);
    for (size_t k = 0; k < count; ++k) {
      const FlowTag& t = w.flows[first + k];
      const CollectiveRecord& c = w.collectives[t.collective];
      unsigned char* r = static_cast<unsigned char*>(buf) + k * row;
      const uint32_t head[4] = {t.flow, t.collective, c.iteration, c.layer}, tail[4] = {t.ring, t.step, t.src_gpu, t.dst_gpu};
      std::memcpy(r, head, sizeof head);
      const char* phase = kPhaseName[size_t(c.phase)];
      std::memcpy(r + at_phase, phase, std::strlen(phase));
      std::memcpy(r + at_group, c.group.data(), c.group.size());
      std::memcpy(r + at_ints, tail, sizeof tail);
    }
  };
  write_table_slabs(group, "flows", types, w.flows.size(),
              "flow: /flows row; collective: row of the collectives table beside this one; iteration, layer: 0-based; src_gpu, "
              "dst_gpu: GPU ids",
              "one row per flow the collectives became, in flow id order: its collective, that collective's "
              "iteration, workload row, phase and group, and its ring and step in the collective's plan "
              "(ring and step 0 for AllToAll)",
              where, fill);
}

void write_gpus(hid_t group, const WorkloadReport& w, const std::string& where) {
  const auto types = compound(sizeof(GpuRow), {
      Field{"gpu", HOFFSET(GpuRow, gpu), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"compute_ps", HOFFSET(GpuRow, compute_ps), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"exposed_ps", HOFFSET(GpuRow, exposed_ps), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"exposed_tp_ps", HOFFSET(GpuRow, exposed_tp_ps), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"exposed_dp_ps", HOFFSET(GpuRow, exposed_dp_ps), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"exposed_ep_ps", HOFFSET(GpuRow, exposed_ep_ps), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"exposed_dp_ep_ps", HOFFSET(GpuRow, exposed_dp_ep_ps), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"exposed_pp_ps", HOFFSET(GpuRow, exposed_pp_ps), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"bubble_ps", HOFFSET(GpuRow, bubble_ps), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"update_ps", HOFFSET(GpuRow, update_ps), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"finish_ps", HOFFSET(GpuRow, finish_ps), H5T_NATIVE_INT64, H5T_STD_I64LE},
  });
  std::vector<GpuRow> rows;
  rows.reserve(w.per_gpu.size());
  for (size_t g = 0; g < w.per_gpu.size(); ++g) {
    const GpuRecord& r = w.per_gpu[g];
    rows.push_back({uint32_t(g), r.compute, r.exposed(), r.exposed_tp, r.exposed_dp, r.exposed_ep, r.exposed_dp_ep,
                    r.exposed_pp, r.bubble, r.update, r.finish});
  }
  write_table(group, "gpus", types, rows.data(), rows.size(), "gpu: GPU id; *_ps: ps",
              "one row per GPU over the whole run: its compute, the time it was blocked on collectives "
              "(exposed, by group and PP; exposed_ps is their sum), its pipeline bubble (waiting for a peer "
              "stage, not exposure), the update delays it waited for, and when its program ended (-1: it "
              "did not); the slowest GPU (attribute slowest_gpu of this group) is exposed longest",
              where);
}

}  // namespace

namespace results_layout {

Handle write_workload(hid_t loc, const std::string& name, const std::string& where, const WorkloadReport& w) {
  Handle group(check(H5Gcreate2(loc, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "creating group " + where),
               H5Gclose);
  const EndToEnd& e = w.end_to_end;
  attr_string(group, "workload_file", w.workload_file);
  attr_u64(group, "gpus", w.gpus);
  attr_u64(group, "tp", w.tp);
  attr_u64(group, "dp", w.dp);
  attr_u64(group, "ep", w.ep);
  attr_u64(group, "dp_ep", w.dp_ep);
  attr_u64(group, "report_gpu", w.report_gpu);
  attr_u64(group, "slowest_gpu", w.slowest_gpu);
  attr_u8(group, "exposure_by_group", w.exposure_by_group ? 1 : 0);
  attr_i64(group, "total_time_ps", e.total);
  attr_i64(group, "total_compute_ps", e.total_compute);
  attr_i64(group, "total_exposed_ps", e.total_exposed);
  attr_i64(group, "exposed_dp_ps", e.exposed_dp);
  attr_i64(group, "exposed_dp_ep_ps", e.exposed_dp_ep);
  attr_i64(group, "exposed_tp_ps", e.exposed_tp);
  attr_i64(group, "exposed_ep_ps", e.exposed_ep);
  attr_i64(group, "exposed_pp_ps", e.exposed_pp);
  attr_i64(group, "bubble_ps", e.bubble);
  attr_u8(group, "complete", w.complete() ? 1 : 0);
  attr_string(group, "incomplete", w.incomplete);
  attr_string(group, "units",
              "gpus, tp, dp, ep, dp_ep: counts; report_gpu, slowest_gpu: GPU id; *_ps: ps, summed over "
              "iterations at the reporting GPU (SimAI's EndToEnd); complete, exposure_by_group: 1 or 0 (0: "
              "a Chakra trace, whose exposure is one total per GPU, ASTRA-sim's finish - GPU compute: "
              "total_exposed_ps and /workload/gpus exposed_ps hold it, the other exposed_*, bubble and update "
              "figures are 0); incomplete: \"\" or what was still pending when the run ended");
  write_iterations(group, w.iterations, where);
  write_layers(group, w.layers, where);
  write_collectives(group, w.collectives, where);
  write_flow_tags(group, w, where);
  write_gpus(group, w, where);
  return group;
}

void write_workload(hid_t file, const WorkloadReport& w) { write_workload(file, "workload", "/workload", w); }

void write_jobs(hid_t file, const std::vector<JobReport>& jobs) {
  Handle top(check(H5Gcreate2(file, "jobs", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "creating group /jobs"), H5Gclose);
  attr_u64(top, "jobs", jobs.size());
  // HDF5 lists a group's members by name: the scenario's order is kept as each job's `index`.
  attr_string(top, "units", "jobs: count; per job (group /jobs/<name>, the tables of /workload): index: 0-based "
                            "[[job]] order; start_ps: ps; hosts: the topology GPU id of each of the job's GPUs");
  for (size_t k = 0; k < jobs.size(); ++k) {
    const JobReport& j = jobs[k];
    Handle g = write_workload(top, j.name, "/jobs/" + j.name, *j.report);
    attr_u64(g, "index", k);
    attr_i64(g, "start_ps", j.start);
    // The job's own GPU g (the tables' GPU ids) runs on topology GPU hosts[g].
    std::vector<uint32_t> hosts = j.hosts;
    const auto types = compound(sizeof(uint32_t), {Field{"topology_gpu", 0, H5T_NATIVE_UINT32, H5T_STD_U32LE}});
    write_table(g, "hosts", types, hosts.data(), hosts.size(), "topology_gpu: GPU id of the topology",
                "one row per GPU of the job, in the job's GPU order (the GPU ids of this group's tables): the "
                "topology GPU it runs on",
                "/jobs/" + j.name);
  }
}

}  // namespace results_layout

}  // namespace wh
