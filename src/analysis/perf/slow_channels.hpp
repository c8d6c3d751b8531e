// Slow NIC / link from per-channel proxy timings (the profiler rings' channel
// slots; docs/perf.md "Profiler rings").
//
// A channel of a ring or tree algorithm is its own pipeline over its own
// connections, and a proxy op exists only where the channel crosses the
// network: the network endpoints of channel c on a rank are its send and recv
// slots of c. A slow NIC or cable slows the whole pipeline of every channel
// that crosses it, and no other channel. So, per communicator:
//
//  * each op's proxy time on a channel is divided by the median of the faster
//    half of that op's channels (sizes and algorithms cancel out); a channel's
//    ratio is the median over >= min_ops distinct ops (persistence);
//  * channels are compared with each other against the faster half (a slow NIC
//    of four slows half of the channels: the plain median would be a slow one):
//    slow when the modified z of the ratio > 3.5 (median and MAD of the faster
//    half, MAD floored at 2 %) AND the ratio >= 1.5 x that median;
//  * each channel is a group test over its network endpoints (processes):
//    endpoints of a healthy channel are cleared, and a slow channel's only
//    uncleared endpoint is named (its NIC), or its two uncleared endpoints on
//    different hosts joined by the channel's send/recv pair (the link).
//
// Arrival skew cannot fake a slow channel: a late rank delays every channel's
// proxy op alike, so the ratios do not move.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ccdiag/coll_timing.hpp"

namespace ccdiag::perf {

struct ChannelOptions {
  int min_ops = 5;
  int min_channels = 3;
  double z_threshold = 3.5;
  double min_ratio = 1.5;
  double mad_floor = 0.02;
};

struct ChannelStat {
  std::string comm;
  int channel = 0;
  int ops = 0;                          // distinct ops measured
  double median_ms = 0;                 // median proxy time
  double ratio = 0;                     // median of (time / median over channels of the op)
  double z = 0;
  bool slow = false;
  std::vector<std::string> endpoints;   // process keys with a proxy op on this channel
};

struct ChannelLink {
  std::string comm;
  std::string from, to;                 // process keys (sender, receiver)
  std::vector<int> channels;
};

struct ChannelAnalysis {
  std::vector<ChannelStat> channels;
  std::vector<std::string> nic_culprits;   // process keys: their NIC / PCIe path
  std::vector<ChannelLink> link_culprits;  // two endpoints left: the link between them
  std::vector<std::string> suspects;
  int samples = 0;                         // distinct proxy ops read
  std::vector<std::string> notes;
};

ChannelAnalysis analyze_channels(const std::vector<ChannelTiming>& samples, const ChannelOptions& opts = {});

}  // namespace ccdiag::perf
