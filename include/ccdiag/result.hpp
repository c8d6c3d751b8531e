// Result<T>: errors as values at layer boundaries (docs/architecture.md).
// An Error carries what failed (message), where (context: a file, a pid, an API
// call) and what the user can do about it (hint). Exceptions are reserved for
// broken invariants and are caught in main.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace ccdiag {

struct Error {
  std::string message;  // what failed, one line, no trailing period
  std::string context;  // the file, pid or call it concerns ("bundle/manifest.json")
  std::string hint;     // what to do about it; may be empty

  // "context: message (hint)" — the one-line form printed to the user.
  std::string one_line() const {
    std::string s = context.empty() ? message : context + ": " + message;
    if (!hint.empty()) s += " (" + hint + ")";
    return s;
  }
};

inline Error make_error(std::string message, std::string context = {}, std::string hint = {}) {
  return Error{std::move(message), std::move(context), std::move(hint)};
}

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}          // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}      // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<Error>(v_); }

  T value_or(T fallback) const { return ok() ? value() : std::move(fallback); }

 private:
  std::variant<T, Error> v_;
};

// Result<void> equivalent.
struct Ok {};
using Status = Result<Ok>;

}  // namespace ccdiag
