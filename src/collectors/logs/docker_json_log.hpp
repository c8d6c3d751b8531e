// Docker's json-file logging driver: the file under
// /var/lib/docker/containers/<id>/<id>-json.log that people copy off a node
// when `docker logs` is gone with the container. One JSON object a line:
//   {"log":"<the line, JSON-escaped, with its \n>","stream":"stderr","time":"<RFC 3339 nano>"}
// (a line over 16 KiB is split into entries whose "log" has no final \n).
// The reader turns such a file back into the lines the process wrote, each
// behind its time, so every consumer reads plain log text. Pure.
#pragma once

#include <string>
#include <string_view>

namespace ccdiag::logs {

// Whether `head` (the start of a file) is a json-file log.
bool looks_docker_json_log(std::string_view head);

// Appends the text of the json-file entries in `block` (whole lines) to
// `out`: "<time> <line>" for each line the process wrote. `at_line_start`
// carries across blocks whether the next entry starts a new line (false after
// a split entry). A line that is not an entry is kept as it is.
void decode_docker_json_log(std::string_view block, std::string& out, bool& at_line_start);

}  // namespace ccdiag::logs
