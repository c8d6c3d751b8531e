// Redaction of credentials in what ccdiag stores or prints (an environment
// value of a rank in `ranks --json`, a bundle's evidence.json, a
// `collect --tar` stream). Outputs are attached to tickets and chat threads;
// ccdiag runs as root and reads every process's environment, so a credential
// that slips through is one ccdiag leaked.
//
// By name: a variable whose name says it holds a secret (PASS, PWD, SECRET,
// TOKEN, KEY, CREDENTIAL, AUTH, COOKIE, SESSION, PRIVATE) is redacted whatever
// its value. By value, whatever the name (allowlisted variables carry
// secrets too: NCCL_COMM_ID=user:pw@host:port):
//   - userinfo with or without a scheme: "user:pw@host", "redis://u:p/w@h"
//   - HTTP credentials: "Authorization: Bearer ...", "Basic ...", "token ..."
//   - query/assignment values named like a secret: "?token=", "&key=",
//     "password=", "secret:"
//   - well-known token prefixes (AKIA, ghp_, xoxb-, eyJ (JWT), sk-, hf_, glpat-)
//   - long high-entropy runs (random keys, base64, long lowercase tokens),
//     except UUIDs (GPU-..., run ids) that ranks are matched by.
#pragma once

#include <string>
#include <string_view>

namespace ccdiag {

inline constexpr const char* kRedactedValue = "<redacted>";

// True when the name of a variable says its value is a secret.
bool secret_name(std::string_view name);

// True when the value holds a credential by one of the value rules above.
bool secret_value(std::string_view value);

// The value as it may be shown: unchanged, or "<redacted>" whole (a partly
// redacted value still leaks its shape; the name stays for the reader).
std::string redact_env_value(std::string_view name, std::string_view value);

}  // namespace ccdiag
