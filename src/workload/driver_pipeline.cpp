// The workload driver (driver.h): pipeline transfers (a stage's activations and gradients to its neighbours).
#include <algorithm>
#include <tuple>
#include <fmt/core.h>

#include "driver_internal.h"

namespace wh {

using namespace workload_driver;

uint32_t WorkloadDriver::transfer_of(uint32_t iter, bool grad, uint32_t mb, uint32_t chunk, uint32_t receiver) {
  auto [it, fresh] = transfer_of_.emplace(std::make_tuple(iter, grad, mb, chunk, receiver),
                                          static_cast<uint32_t>(transfers_.size()));
  if (fresh) {
    Transfer t;
    t.iter = iter;
    t.grad = grad;
    t.mb = mb;
    t.dst = receiver;
    const uint32_t from = pipeline_prev(layout_.pp, receiver / layout_.stage_gpus, chunk, grad).first;
    t.src = pipeline_peer(layout_, receiver, from);
    const uint64_t bytes = w_.header.pp_comm_bytes;
    CollectiveRecord rec;
    rec.iteration = iter;
    rec.layer = mb < mb_.rows.size() ? mb_.chunk_rows(mb, chunk).first : 0;  // the receiving chunk's first row
    rec.layer_name = fmt::format("{} micro-batch {}{}", grad ? "pipeline gradient" : "pipeline activation", mb,
                                 mb_.chunks() > 1 ? fmt::format(" chunk {}", chunk) : "");
    rec.phase = grad ? Phase::Ig : Phase::Fwd;
    rec.op = "SendRecv";
    rec.group = "PP";
    rec.group_first = std::min(t.src, t.dst);
    rec.ranks = 2;
    rec.bytes = bytes;
    rec.flows = bytes > 0 ? 1 : 0;
    rec.flow_bytes = bytes;
    rec.start = rec.end = net_.client_now();
    t.record = report_.collectives.size();
    report_.collectives.push_back(std::move(rec));
    transfers_.push_back(t);
    ++pending_;
  }
  return it->second;
}

// GPU g sends its activation (to the next stage) or gradient (to the previous one) of a micro-batch;
// the program goes on at once, as Megatron's isend.
void WorkloadDriver::pp_send(uint32_t g, const ProgramStep& s) {
  const bool grad = s.kind == ProgramStep::SendGrad;
  const auto [stage, chunk] = pipeline_next(layout_.pp, gpus_[g].pp_stage, s.chunk, grad);
  const uint32_t t = transfer_of(gpus_[g].iter, grad, s.arg, chunk, pipeline_peer(layout_, g, stage));
  const Time now = net_.client_now();
  transfers_[t].sent = now;
  report_.collectives[transfers_[t].record].start = now;
  note_time(gpus_[g].iter, now);
  if (w_.header.pp_comm_bytes == 0) {
    transfer_done(t);  // nothing to send: the receiver only waits for the sender
    return;
  }
  if (o_.memo) {
    Transfer& T = transfers_[t];
    T.involves = net_.island_kinds(host_of(T.src), host_of(T.dst));
    involve(T.src, T.involves, +1), involve(T.dst, T.involves, +1);
  }
  due_at(now + o_.send_latency, kPpBit | t);
}

// GPU g needs the activation or gradient of a micro-batch; false: it blocks until transfer_done.
bool WorkloadDriver::pp_recv(uint32_t g, const ProgramStep& s) {
  const uint32_t t = transfer_of(gpus_[g].iter, s.kind == ProgramStep::RecvGrad, s.arg, s.chunk, g);
  if (transfers_[t].done >= 0) return true;
  transfers_[t].waiting_since = net_.client_now();
  return false;
}

// A pipeline transfer's flow finished (the sender got its last ACK), or it had no bytes.
void WorkloadDriver::transfer_done(uint32_t t) {
  const Time now = net_.client_now();
  Transfer& T = transfers_[t];
  if (T.involves) involve(T.src, T.involves, -1), involve(T.dst, T.involves, -1), T.involves = 0;
  T.done = now;
  report_.collectives[T.record].end = now;
  --pending_;
  note_time(T.iter, now);
  const uint32_t r = T.dst;
  Gpu& R = gpus_[r];
  if (R.stage != kRecvWait || T.waiting_since < 0) return;
  {
    // The wait splits at the moment the peer sent: before it the stage idled for its peer's work
    // (bubble), after it for the transfer itself (exposed PP communication).
    const Time from = std::max(T.sent, T.waiting_since);
    report_.per_gpu[r].bubble += from - T.waiting_since;
    report_.per_gpu[r].exposed_pp += now - from;
  }
  ++R.pc;
  R.stage = kStepBegin;
  if (advancing_ != r) advance(r);
}

}  // namespace wh
