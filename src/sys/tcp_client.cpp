#include "sys/tcp_client.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ccdiag {

std::string_view to_string(TcpStatus s) {
  switch (s) {
    case TcpStatus::ok: return "ok";
    case TcpStatus::refused: return "refused";
    case TcpStatus::timeout: return "timeout";
    case TcpStatus::closed: return "closed";
    case TcpStatus::error: return "error";
  }
  return "error";
}

bool split_host_port(const std::string& addr, int default_port, std::string& host, int& port) {
  port = default_port;
  std::string p;
  if (!addr.empty() && addr.front() == '[') {
    auto close = addr.find(']');
    if (close == std::string::npos) return false;
    host = addr.substr(1, close - 1);
    if (close + 1 < addr.size()) {
      if (addr[close + 1] != ':') return false;
      p = addr.substr(close + 2);
    }
  } else if (std::count(addr.begin(), addr.end(), ':') > 1) {
    host = addr;  // bare IPv6 address, no port
  } else {
    auto colon = addr.rfind(':');
    host = colon == std::string::npos ? addr : addr.substr(0, colon);
    if (colon != std::string::npos) p = addr.substr(colon + 1);
  }
  if (host.empty()) return false;
  if (!p.empty()) {
    if (p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos) return false;
    port = std::stoi(p);
  }
  return port >= 1 && port <= 65535;
}

std::vector<std::string> resolve_numeric(const std::string& host) {
  if (host == "localhost") return {"127.0.0.1", "::1"};
  in_addr a4{};
  in6_addr a6{};
  if (inet_pton(AF_INET, host.c_str(), &a4) == 1 || inet_pton(AF_INET6, host.c_str(), &a6) == 1) return {host};
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_ADDRCONFIG;
  addrinfo* res = nullptr;
  std::vector<std::string> v4, v6;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &res) == 0) {
    for (auto* p = res; p; p = p->ai_next) {
      char buf[INET6_ADDRSTRLEN] = {};
      if (p->ai_family == AF_INET) {
        inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(p->ai_addr)->sin_addr, buf, sizeof(buf));
        v4.emplace_back(buf);
      } else if (p->ai_family == AF_INET6) {
        inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(p->ai_addr)->sin6_addr, buf, sizeof(buf));
        v6.emplace_back(buf);
      }
    }
    freeaddrinfo(res);
  }
  for (auto& s : v6)
    if (std::find(v4.begin(), v4.end(), s) == v4.end()) v4.push_back(s);
  v4.erase(std::unique(v4.begin(), v4.end()), v4.end());
  return v4;
}

TcpConnection::~TcpConnection() { close(); }
TcpConnection::TcpConnection(TcpConnection&& o) noexcept : fd_(o.fd_), pending_(std::move(o.pending_)) { o.fd_ = -1; }
TcpConnection& TcpConnection::operator=(TcpConnection&& o) noexcept {
  if (this != &o) {
    close();
    fd_ = o.fd_;
    pending_ = std::move(o.pending_);
    o.fd_ = -1;
  }
  return *this;
}

void TcpConnection::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  pending_.clear();
}

TcpResult TcpConnection::wait(short events, SteadyTime deadline, const char* what) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return {TcpStatus::timeout, std::string("timed out waiting to ") + what};
    pollfd p{fd_, events, 0};
    int rc = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000 * 60)));
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return {TcpStatus::error, std::strerror(errno)};
    if (rc == 0) continue;  // re-check the deadline
    return {};
  }
}

TcpResult TcpConnection::connect(const std::string& numeric_host, int port, SteadyTime deadline) {
  close();
  sockaddr_storage ss{};
  socklen_t len = 0;
  int family = AF_INET;
  auto* s4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* s6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (inet_pton(AF_INET, numeric_host.c_str(), &s4->sin_addr) == 1) {
    s4->sin_family = AF_INET;
    s4->sin_port = htons(static_cast<uint16_t>(port));
    len = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, numeric_host.c_str(), &s6->sin6_addr) == 1) {
    family = AF_INET6;
    s6->sin6_family = AF_INET6;
    s6->sin6_port = htons(static_cast<uint16_t>(port));
    len = sizeof(sockaddr_in6);
  } else {
    return {TcpStatus::error, "not a numeric address: " + numeric_host};
  }
  fd_ = ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    int e = errno;
    // No IPv6 in this namespace: the same as nothing listening there.
    if (e == EAFNOSUPPORT) return {TcpStatus::refused, std::strerror(e)};
    return {TcpStatus::error, std::strerror(e)};
  }
  int rc = ::connect(fd_, reinterpret_cast<sockaddr*>(&ss), len);
  if (rc != 0 && errno != EINPROGRESS) {
    int e = errno;
    close();
    if (e == ECONNREFUSED || e == EADDRNOTAVAIL || e == ENETUNREACH || e == EHOSTUNREACH)
      return {TcpStatus::refused, std::strerror(e)};
    return {TcpStatus::error, std::strerror(e)};
  }
  if (rc != 0) {
    auto w = wait(POLLOUT, deadline, "connect");
    if (!w.ok()) {
      close();
      return w;
    }
    int err = 0;
    socklen_t el = sizeof(err);
    ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &el);
    if (err != 0) {
      close();
      if (err == ECONNREFUSED || err == ENETUNREACH || err == EHOSTUNREACH || err == EADDRNOTAVAIL)
        return {TcpStatus::refused, std::strerror(err)};
      return {TcpStatus::error, std::strerror(err)};
    }
  }
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return {};
}

TcpResult TcpConnection::send_all(const std::string& data, SteadyTime deadline) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::send(fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      off += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      auto w = wait(POLLOUT, deadline, "send");
      if (!w.ok()) return w;
      continue;
    }
    if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) return {TcpStatus::closed, std::strerror(errno)};
    return {TcpStatus::error, std::strerror(errno)};
  }
  return {};
}

TcpResult TcpConnection::read_line(std::string& line, SteadyTime deadline, size_t max_len) {
  for (;;) {
    auto nl = pending_.find('\n');
    if (nl != std::string::npos) {
      line = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      return {};
    }
    if (pending_.size() > max_len) return {TcpStatus::error, "line longer than " + std::to_string(max_len) + " bytes"};
    auto w = wait(POLLIN, deadline, "read a reply line");
    if (!w.ok()) return w;
    char buf[4096];
    ssize_t n = ::recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n < 0) return {errno == ECONNRESET ? TcpStatus::closed : TcpStatus::error, std::strerror(errno)};
    if (n == 0) {
      line = pending_;
      return {TcpStatus::closed, "connection closed before a full line"};
    }
    pending_.append(buf, static_cast<size_t>(n));
  }
}

TcpResult TcpConnection::read_to_eof(std::string& out, SteadyTime deadline, size_t max_bytes) {
  out = std::move(pending_);
  pending_.clear();
  for (;;) {
    if (out.size() > max_bytes) return {TcpStatus::error, "reply larger than " + std::to_string(max_bytes) + " bytes"};
    auto w = wait(POLLIN, deadline, "read the reply to the end");
    if (!w.ok()) return w;
    char buf[16384];
    ssize_t n = ::recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n < 0) {
      if (errno == ECONNRESET) return {};  // the server closed hard after writing: treat as EOF
      return {TcpStatus::error, std::strerror(errno)};
    }
    if (n == 0) return {};
    out.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace ccdiag
