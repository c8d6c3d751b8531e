// Gathering what the launcher brings back: each host's armoured bundle
// stream (bundle/armor.hpp) is decoded as it arrives into
// <work>/<host>.tar.gz (never held in memory), then unpacked into
// <out>/<host>/ and checked with read_bundle. A host whose stream is absent,
// cut or corrupt is listed as failed with the reason and the last lines it
// (or the launcher about it) wrote on stderr.
#pragma once

#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bundle/armor.hpp"

namespace ccdiag {

struct HostOutcome {
  std::string host;
  bool ok = false;
  std::string reason;  // why it failed; empty when ok
};

class Gatherer {
 public:
  Gatherer(std::string work_dir, std::vector<std::string> hosts);

  // A line of one host's stdout (label already removed).
  void host_stdout(const std::string& host, std::string_view text);
  // A line of one host's stderr, or the launcher's message about it.
  void host_stderr(const std::string& host, std::string_view text);
  // pdsh / clush stdout: "host: text". Lines of unknown hosts are counted.
  void labeled_stdout(std::string_view line);
  // pdsh "pdsh@local: host: msg", clush "clush: host: msg", or "host: remote stderr".
  void labeled_stderr(std::string_view line);

  // Unpacks every host into out_dir/<host>/ and returns one outcome per host,
  // in the order given to the constructor.
  std::vector<HostOutcome> finish(const std::string& out_dir);

  size_t unlabeled_lines() const { return unlabeled_; }

 private:
  struct Stream {
    std::unique_ptr<std::ofstream> file;
    std::unique_ptr<ArmorDecoder> decoder;
    std::vector<std::string> err_tail;  // last lines of stderr, capped
  };
  Stream& stream(const std::string& host);
  std::string work_;
  std::vector<std::string> hosts_;
  std::map<std::string, Stream, std::less<>> streams_;
  size_t unlabeled_ = 0;
};

}  // namespace ccdiag
