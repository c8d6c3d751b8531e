// parse_nccl_version_string(): the version an NCCL image or log carries.
#include <catch2/catch.hpp>

#include <string>

#include "collectors/nccl/attach/layout.hpp"

using namespace ccdiag::nccl::attach;

TEST_CASE("nccl version: the string a cu13 wheel library embeds", "[nccl][layout]") {
  // Exactly as it sits in .rodata of libnccl.so.2 from nvidia-nccl-cu13 2.28.9.
  auto v = parse_nccl_version_string("NCCL version 2.28.9+cuda13.0");
  REQUIRE(v);
  CHECK(v->major == 2);
  CHECK(v->minor == 28);
  CHECK(v->patch == 9);
  CHECK(v->cuda_major == 13);
  CHECK(v->cuda_minor == 0);
  CHECK(v->code() == 22809);
  CHECK(v->str() == "2.28.9");
  CHECK(v->cuda_ge_11_3());
}

TEST_CASE("nccl version: the INFO line of an init log", "[nccl][layout]") {
  auto v = parse_nccl_version_string("node-3:202016:202016 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n");
  REQUIRE(v);
  CHECK(v->str() == "2.21.5");
  CHECK(v->cuda_major == 12);
  CHECK(v->cuda_minor == 4);
}

TEST_CASE("nccl version: CUDA before 11.3 is told apart (layouts differ)", "[nccl][layout]") {
  auto old = parse_nccl_version_string("NCCL version 2.18.6+cuda11.0");
  REQUIRE(old);
  CHECK_FALSE(old->cuda_ge_11_3());
  auto v112 = parse_nccl_version_string("NCCL version 2.18.6+cuda11.2");
  REQUIRE(v112);
  CHECK_FALSE(v112->cuda_ge_11_3());
  auto v113 = parse_nccl_version_string("NCCL version 2.18.6+cuda11.3");
  REQUIRE(v113);
  CHECK(v113->cuda_ge_11_3());
  auto v12 = parse_nccl_version_string("NCCL version 2.18.6+cuda12.0");
  REQUIRE(v12);
  CHECK(v12->cuda_ge_11_3());
}

TEST_CASE("nccl version: no +cuda suffix leaves the CUDA version unknown", "[nccl][layout]") {
  auto v = parse_nccl_version_string("NCCL version 2.30.7");
  REQUIRE(v);
  CHECK(v->str() == "2.30.7");
  CHECK(v->cuda_major == -1);
  CHECK(v->cuda_minor == -1);
  CHECK(v->cuda_ge_11_3());
  // A malformed suffix is ignored, the NCCL version still counts.
  auto w = parse_nccl_version_string("NCCL version 2.30.7+cuda13");
  REQUIRE(w);
  CHECK(w->cuda_major == -1);
  auto x = parse_nccl_version_string("NCCL version 2.30.7+cudaX.Y");
  REQUIRE(x);
  CHECK(x->cuda_major == -1);
}

TEST_CASE("nccl version: format strings before the real one are skipped", "[nccl][layout]") {
  // .rodata holds printf formats next to the literal version string.
  static const char bytes[] =
      "NCCL version %s\0cudaDriverVersion %d\0NCCL version %d.%d.%d\0NCCL version 2.26.2+cuda12.2\0";
  const std::string rodata(bytes, sizeof bytes - 1);
  auto v = parse_nccl_version_string(rodata);
  REQUIRE(v);
  CHECK(v->str() == "2.26.2");
  CHECK(v->cuda_major == 12);
  CHECK(v->cuda_minor == 2);
}

TEST_CASE("nccl version: the first valid occurrence wins", "[nccl][layout]") {
  auto v = parse_nccl_version_string("NCCL version 2.19.3+cuda12.3 ... NCCL version 2.30.7+cuda13.0");
  REQUIRE(v);
  CHECK(v->str() == "2.19.3");
}

TEST_CASE("nccl version: junk yields nothing", "[nccl][layout]") {
  const char* junk[] = {
      "",
      "NCCL version",
      "NCCL version ",
      "NCCL version 2",
      "NCCL version 2.28",
      "NCCL version 2.28.",
      "NCCL version 2..9",
      "NCCL version .28.9",
      "NCCL version 2.x.9",
      "NCCL version -2.28.9",
      "NCCL version  2.28.9",       // two spaces: not what NCCL prints
      "nccl version 2.28.9",        // case matters
      "NCCL Version 2.28.9",
      "NCCL version 99999.1.1",     // absurd component: refused, not overflowed
      "NCCL version 2.28.123456789012345678901234567890",
      "version 2.28.9+cuda13.0",
  };
  for (const char* s : junk) {
    INFO(s);
    CHECK_FALSE(parse_nccl_version_string(s));
  }
}

TEST_CASE("nccl version: embedded NULs and high bytes do not stop the scan", "[nccl][layout]") {
  static const char bytes[] = "\xff\xfe\0\0NCCL version \x80\0NCCL version 2.27.7+cuda12.9\xff";
  const std::string s(bytes, sizeof bytes - 1);
  auto v = parse_nccl_version_string(s);
  REQUIRE(v);
  CHECK(v->str() == "2.27.7");
  CHECK(v->cuda_minor == 9);
}
