// /proc parsers used by rank discovery and stacks, and the environment
// allowlist/redaction.
#include <catch2/catch.hpp>

#include "collectors/proc/proc_parse.hpp"
#include "collectors/proc/rank_discovery.hpp"
#include "sys/memory_reader.hpp"

using namespace ccdiag;

TEST_CASE("stat: comm with spaces and parentheses is parsed from the last ')'", "[proc]") {
  // A thread renamed with pthread_setname_np("a) (b S 9") — the kernel prints it raw.
  const auto st = parse_proc_stat("4242 (a) (b S 9) R 1 4242 4242 0 -1 4194304 100 0 0 0 15 7 0 0 20 0 3 0 777 0 0\n");
  REQUIRE(st);
  CHECK(st->pid == 4242);
  CHECK(st->comm == "a) (b S 9");
  CHECK(st->state == 'R');
  CHECK(st->ppid == 1);
  CHECK(st->utime == 15);
  CHECK(st->stime == 7);
  CHECK(st->num_threads == 3);
  CHECK(st->starttime == 777);
}

TEST_CASE("stat: garbage gives nullopt", "[proc]") {
  CHECK_FALSE(parse_proc_stat(""));
  CHECK_FALSE(parse_proc_stat("12 (x"));
  CHECK_FALSE(parse_proc_stat("x (y) S 1"));
  CHECK_FALSE(parse_proc_stat("1 (y) SS 1"));
}

TEST_CASE("maps: paths with spaces, deleted files, anonymous mappings, bad lines counted", "[proc]") {
  const char* text =
      "55d4c8a00000-55d4c8a01000 r--p 00000000 fd:01 1311021                    /usr/bin/python3.10\n"
      "7f3a10000000-7f3a10200000 r-xp 00001000 fd:01 3300001                    /usr/lib/x86_64-linux-gnu/libnccl.so.2.21.5\n"
      "7f3a20000000-7f3a20001000 r-xp 00000000 fd:01 99                         /tmp/my lib.so (deleted)\n"
      "7ffc5a1b2000-7ffc5a1d3000 rw-p 00000000 00:00 0                          [stack]\n"
      "7f0000000000-7f0000001000 rw-p 00000000 00:00 0 \n"
      "not a maps line\n"
      "zzzz-1000 r--p 0 0 0\n";
  size_t skipped = 0;
  const auto m = parse_maps(text, &skipped);
  REQUIRE(m.size() == 5);
  CHECK(skipped == 2);
  CHECK(m[0].start == 0x55d4c8a00000);
  CHECK(m[0].end == 0x55d4c8a01000);
  CHECK(m[1].perms == "r-xp");
  CHECK(m[1].offset == 0x1000);
  CHECK(m[2].path == "/tmp/my lib.so (deleted)");
  CHECK(m[3].path == "[stack]");
  CHECK(m[4].path.empty());
  const auto libs = mapped_libraries(m);
  CHECK(libs.nccl_version == std::optional<std::string>("2.21.5"));
}

TEST_CASE("maps: NCCL from a pip wheel has no version in its file name", "[proc]") {
  const auto m = parse_maps(
      "7f3a10000000-7f3a10200000 r-xp 00001000 fd:01 4400001 /usr/local/lib/python3.11/dist-packages/nvidia/nccl/lib/libnccl.so.2\n"
      "7f3a30000000-7f3a30200000 r-xp 00001000 fd:01 2201003 /opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so\n"
      "7f3a40000000-7f3a40200000 r-xp 00001000 fd:01 2201003 /usr/lib/x86_64-linux-gnu/libcuda.so.550.90.07\n");
  const auto libs = mapped_libraries(m);
  CHECK(libs.nccl_path.find("nvidia/nccl/lib/libnccl.so.2") != std::string::npos);
  CHECK_FALSE(libs.nccl_version);
  CHECK(libs.torch_libs == std::vector<std::string>{"libtorch_cuda.so"});
  CHECK(libs.cuda_driver);
}

TEST_CASE("syscall: the three shapes of /proc/TID/syscall", "[proc]") {
  auto s = parse_syscall_line("202 0x55d4ca1f2a08 0x80 0x0 0x0 0x0 0x0 0x7ffc5a1d2c40 0x7f3a1009d117\n");
  REQUIRE(s);
  CHECK(s->nr == 202);
  CHECK(s->args[1] == 0x80);
  CHECK(s->sp == 0x7ffc5a1d2c40);
  CHECK(s->pc == 0x7f3a1009d117);
  auto r = parse_syscall_line("running\n");
  REQUIRE(r);
  CHECK(r->running);
  auto o = parse_syscall_line("-1 0x7ffc5a1d2c40 0x55d4c8a01234\n");
  REQUIRE(o);
  CHECK(o->nr == -1);
  CHECK(o->pc == 0x55d4c8a01234);
  CHECK_FALSE(parse_syscall_line("202 0x1 0x2"));
  CHECK_FALSE(parse_syscall_line(""));
}

TEST_CASE("environment: allowlist keeps rank variables and drops everything else", "[proc][security]") {
  std::string environ;
  for (const char* kv : {"PATH=/usr/bin", "HOME=/root", "RANK=3", "LOCAL_RANK=1", "WORLD_SIZE=8",
                         "MASTER_ADDR=10.0.0.7", "MASTER_PORT=29500", "NCCL_DEBUG=INFO", "NCCL_IB_HCA=mlx5_0,mlx5_1",
                         "SLURM_JOB_ID=8812", "OMPI_COMM_WORLD_RANK=3", "CUDA_VISIBLE_DEVICES=0,1,2,3",
                         "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "novalue", "=x"}) {
    environ += kv;
    environ.push_back('\0');
  }
  const auto env = filter_environment(parse_environ(environ));
  CHECK(env["RANK"] == "3");
  CHECK(env["NCCL_IB_HCA"] == "mlx5_0,mlx5_1");
  CHECK(env["CUDA_VISIBLE_DEVICES"] == "0,1,2,3");
  CHECK(env["SLURM_JOB_ID"] == "8812");
  CHECK_FALSE(env.contains("PATH"));
  CHECK_FALSE(env.contains("HOME"));
  CHECK_FALSE(env.contains("AWS_SECRET_ACCESS_KEY"));
  CHECK(env.dump().find("wJalr") == std::string::npos);
}

TEST_CASE("environment: credential-looking values are redacted even in allowed variables", "[proc][security]") {
  CHECK(looks_like_credential("NCCL_RAS_AUTH_TOKEN", "anything"));
  CHECK(looks_like_credential("NCCL_TUNER_CONFIG", "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"));
  CHECK(looks_like_credential("NCCL_X", "AKIAIOSFODNN7EXAMPLE"));
  CHECK(looks_like_credential("MASTER_ADDR", "https://user:pa55@host.example/x"));
  CHECK(looks_like_credential("NCCL_PLUGIN_P2P", "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFi"));
  CHECK_FALSE(looks_like_credential("NCCL_IB_HCA", "mlx5_0,mlx5_1"));
  CHECK_FALSE(looks_like_credential("NCCL_SOCKET_IFNAME", "eth0"));
  CHECK_FALSE(looks_like_credential("TORCHELASTIC_RUN_ID", "job-8812"));
  CHECK_FALSE(looks_like_credential("NCCL_TOPO_FILE", "/opt/microsoft/ndv5-topo.xml"));
  CHECK_FALSE(looks_like_credential("SLURM_JOB_NODELIST", "gpu-a[01-16]"));
  const auto env = filter_environment({{"NCCL_RAS_AUTH_TOKEN", "s3cr3t"}, {"NCCL_DEBUG", "WARN"}});
  CHECK(env["NCCL_RAS_AUTH_TOKEN"] == kRedacted);
  CHECK(env["NCCL_DEBUG"] == "WARN");
}

TEST_CASE("gpu index from /dev/nvidia links", "[proc]") {
  CHECK(gpu_index_from_device_path("/dev/nvidia3") == std::optional<int>(3));
  CHECK_FALSE(gpu_index_from_device_path("/dev/nvidiactl"));
  CHECK_FALSE(gpu_index_from_device_path("/dev/nvidia-uvm"));
  CHECK_FALSE(gpu_index_from_device_path("socket:[1234]"));
}

TEST_CASE("rank discovery on a torchrun tree with secrets in the environment", "[proc][ranks][security]") {
  const SysRoot root(std::string(CCDIAG_FIXTURES) + "/sysroots/ranks-torchrun-2gpu-secrets");
  const auto d = discover_ranks(root);
  REQUIRE(d.ranks.size() == 2);  // torchrun itself and the srun helper are not ranks
  const auto& r0 = d.ranks[0];
  CHECK(r0.pid == 4101);
  CHECK(r0.rank == std::optional<int>(0));
  CHECK(r0.world_size == std::optional<int>(2));
  CHECK(r0.gpus == std::vector<int>{0});
  CHECK(d.ranks[1].gpus == std::vector<int>{1});
  CHECK(r0.nccl_version == std::optional<std::string>("2.21.5"));
  CHECK(r0.launcher == "torchrun");
  CHECK(r0.threads == 83);
  const std::string all = to_json(r0).dump() + to_json(d.ranks[1]).dump();
  for (const char* secret : {"wJalrXUtnFEMI", "AKIAIOSFODNN7", "hf_SHOULD", "s3cr3t", "ghp_ABC", "sk-SHOULD", "/home/alice"})
    CHECK(all.find(secret) == std::string::npos);
  CHECK(r0.env["NCCL_RAS_AUTH_TOKEN"] == kRedacted);
}

TEST_CASE("buffer memory reader serves regions and RemotePtr reads typed values", "[memory]") {
  BufferMemoryReader m;
  m.add(0x1000, {1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0});
  m.add(0x3000, {0xff});
  CHECK(RemotePtr<uint64_t>{0x1000}.read(m) == std::optional<uint64_t>(1));
  CHECK((RemotePtr<uint64_t>{0x1000} + 1).read(m) == std::optional<uint64_t>(2));
  CHECK_FALSE(RemotePtr<uint64_t>{0x1009}.read(m));  // runs off the region
  CHECK_FALSE(RemotePtr<uint64_t>{0x2000}.read(m));
  uint8_t b = 0;
  CHECK(m.read(0x3000, &b, 1) == 1);
  CHECK(b == 0xff);
}

TEST_CASE("environment: names with non-identifier bytes are dropped (fuzz finding)", "[proc][security]") {
  std::string environ = std::string("NCCL_\xff") + "=1" + '\0' + "NCCL_OK=2" + '\0';
  const auto env = filter_environment(parse_environ(environ));
  CHECK(env.size() == 1);
  CHECK_NOTHROW(env.dump());
}

TEST_CASE("kernel stack of a D thread: function names, offsets dropped", "[proc]") {
  const auto ks = parse_kernel_stack(
      "[<0>] kernel_clone+0x1c3/0x3c0\n[<0>] __do_sys_clone+0x66/0x90\n[<0>] do_syscall_64+0x38/0x90\n"
      "garbage\n[<0>] entry_SYSCALL_64_after_hwframe+0x6e/0xd8\n");
  REQUIRE(ks.size() == 4);
  CHECK(ks[0] == "kernel_clone");
  CHECK(ks[3] == "entry_SYSCALL_64_after_hwframe");
  CHECK(parse_kernel_stack("").empty());
}
