// NicModel (include/wormhole/net/nic_model.h): the receiver's go-back-N replies and the sender's ACKs;
// the QP choice and data packets are inline in the header (docs/network-model.md §8–§9).
#include "wormhole/net/nic_model.h"

#include <algorithm>

namespace wh {

NicModel::Received NicModel::on_data(Flow& f, const Packet& pk, Time now) const {
  const NetParams& prm = fab_.params;
  Received r;
  f.milestone = prm.l2_ack_interval;  // reset on every packet, as the reference does (§1)
  if (pk.seq == f.rcv_nxt) {
    f.rcv_nxt += pk.payload;
    if (f.rcv_nxt >= f.milestone) {
      f.milestone += prm.l2_ack_interval;
      r.reply = Reply::Ack;
    } else if (prm.l2_chunk_size && f.rcv_nxt % prm.l2_chunk_size == 0) {
      r.reply = Reply::Ack;
    }
  } else if (pk.seq > f.rcv_nxt) {
    if (now >= f.nack_timer || f.last_nack != f.rcv_nxt) {
      f.nack_timer = now + 500 * kUs;
      f.last_nack = f.rcv_nxt;
      if (prm.l2_back_to_zero) f.rcv_nxt = f.rcv_nxt / prm.l2_chunk_size * prm.l2_chunk_size;
      r.reply = Reply::Nack;
    }
  } else {
    // A duplicate is dropped silently, as the reference does, unless it was resent by a
    // retransmission timeout: then the ACK covering it was lost, and only a new one ends the stall.
    r.duplicate = true;
    if (pk.retx) r.reply = Reply::Ack;
  }
  return r;
}

void NicModel::make_reply(Packet& pk, Reply r, uint64_t rcv_nxt) const {
  pk.type = r == Reply::Ack ? PktType::Ack : PktType::Nack;
  pk.seq = rcv_nxt;
  pk.size = fab_.params.ack_bytes;
  pk.payload = 0;
  std::swap(pk.src, pk.dst);
  std::swap(pk.sport, pk.dport);
  pk.cnp = pk.ecn;
  pk.ecn = 0;
  pk.retx = 0;
}

bool NicModel::on_ack(Flow& f, const Packet& pk, Time now) const {
  const NetParams& prm = fab_.params;
  const uint64_t acked = prm.l2_back_to_zero ? pk.seq / prm.l2_chunk_size * prm.l2_chunk_size : pk.seq;
  if (acked > f.snd_una) {
    f.snd_una = acked;
    f.last_progress = now;
    f.rto_recovery = false;
  }
  if (f.snd_una >= f.end_seq()) return true;
  if (pk.type == PktType::Nack) f.snd_nxt = f.snd_una;  // go-back-N
  f.cnps += pk.cnp;
  return false;
}

std::vector<uint32_t> NicModel::take_held() {
  std::vector<uint32_t> ids(held_.begin(), held_.end());
  held_.clear();
  return ids;
}

}  // namespace wh
