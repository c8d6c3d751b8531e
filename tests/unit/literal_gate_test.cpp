// LiteralGate: which table entries can match a line. It may only ever skip an
// entry none of whose literals occurs (the skipped entry would fail anyway).
#include <catch2/catch.hpp>

#include <string>
#include <thread>

#include "analysis/tree/literal_gate.hpp"

using ccdiag::LiteralGate;

TEST_CASE("the gate opens exactly the entries whose literals occur, and the always-tried ones", "[tree][gate]") {
  const LiteralGate gate({{"No space left", "failed to extend"}, {"ibv_modify_qp"}, {}, {"x", ""}, {"NCCL WARN"}}, 0);
  std::vector<uint64_t> bits;
  gate.candidates("node1:1:1 [0] misc/shmutils.cc:88 NCCL WARN Error: failed to extend /dev/shm/nccl-x", bits);
  CHECK(LiteralGate::test(bits, 0));        // "failed to extend"
  CHECK_FALSE(LiteralGate::test(bits, 1));  // no ibv_modify_qp
  CHECK(LiteralGate::test(bits, 2));        // no literal: always tried
  CHECK(LiteralGate::test(bits, 3));        // an empty literal: always tried
  CHECK(LiteralGate::test(bits, 4));
  gate.candidates("epoch 3 step 1200 loss 2.31", bits);
  CHECK_FALSE(LiteralGate::test(bits, 0));
  CHECK_FALSE(LiteralGate::test(bits, 1));
  CHECK(LiteralGate::test(bits, 2));
  CHECK_FALSE(LiteralGate::test(bits, 4));
  // Case matters (the tables' tests are case-sensitive), and a literal cut by the line's end is absent.
  gate.candidates("nccl warn", bits);
  CHECK_FALSE(LiteralGate::test(bits, 4));
  gate.candidates("NCCL WAR", bits);
  CHECK_FALSE(LiteralGate::test(bits, 4));
  gate.candidates("", bits);
  CHECK_FALSE(LiteralGate::test(bits, 0));
  CHECK(LiteralGate::test(bits, 2));
}

TEST_CASE("a gate with more than 64 entries, used from several threads", "[tree][gate]") {
  std::vector<std::string> words;
  for (int i = 0; i < 150; ++i) words.push_back("word" + std::to_string(i) + "_");
  std::vector<std::vector<std::string_view>> needles;
  for (const auto& w : words) needles.push_back({w});
  const LiteralGate gate(needles, 0);
  auto check = [&](int k) {
    std::vector<uint64_t> bits;
    for (int round = 0; round < 200; ++round) {
      const int i = (k * 37 + round) % 150;
      gate.candidates("a line with " + words[static_cast<size_t>(i)] + " in it", bits);
      for (int j = 0; j < 150; ++j)
        if (LiteralGate::test(bits, static_cast<size_t>(j)) != (j == i)) return false;
    }
    return true;
  };
  bool ok1 = false, ok2 = false;
  std::thread t1([&] { ok1 = check(1); }), t2([&] { ok2 = check(2); });
  t1.join();
  t2.join();
  CHECK(ok1);
  CHECK(ok2);
}

TEST_CASE("before its compile_after-th line the gate tries every entry", "[tree][gate]") {
  const LiteralGate gate({{"alpha"}, {"beta"}}, 2);
  std::vector<uint64_t> bits;
  gate.candidates("gamma", bits);
  CHECK(LiteralGate::test(bits, 0));
  CHECK(LiteralGate::test(bits, 1));
  gate.candidates("gamma", bits);
  CHECK(LiteralGate::test(bits, 0));
  gate.candidates("gamma", bits);  // the third call compiles and filters
  CHECK_FALSE(LiteralGate::test(bits, 0));
  CHECK_FALSE(LiteralGate::test(bits, 1));
}
