"""Man pages and shell completions are generated from the CLI definition
(tools/docgen): one page per subcommand path, naming every option the
subcommand's --help prints; bash, fish and zsh complete subcommands and
options the binary accepts. `cmake --install` puts them where man and the
shells look."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from ccdiag_test import BUILD_DIR, run

DOCS = os.path.join(BUILD_DIR, "generated", "docs")
MAN1 = os.path.join(DOCS, "man", "man1")
COMPLETIONS = os.path.join(DOCS, "completions")


def subcommands_of(path):
    """Subcommand names listed by `ccdiag <path> --help`."""
    p = run(path + ["--help"])
    assert p.returncode == 0, p.stderr
    text = p.stdout
    if "Subcommands:" not in text:
        return []
    block = text.split("Subcommands:", 1)[1]
    names = []
    for line in block.splitlines()[0:]:
        m = re.match(r"^  (\S+)\s{2,}", line)
        if m:
            names.append(m.group(1))
        elif line and not line.startswith(" "):
            break
    return names


def all_paths():
    paths, todo = [], [[]]
    while todo:
        path = todo.pop()
        paths.append(path)
        todo.extend(path + [s] for s in subcommands_of(path))
    return paths


def long_options_of(path):
    p = run(path + ["--help"])
    return set(re.findall(r"(?m)^\s+(?:-\w, )?(--[a-z][a-z0-9-]*)", p.stdout))


class ManPages(unittest.TestCase):
    def test_one_page_per_subcommand_path_with_every_option(self):
        paths = all_paths()
        self.assertGreater(len(paths), 15)
        for path in paths:
            page = os.path.join(MAN1, "-".join(["ccdiag"] + path) + ".1")
            self.assertTrue(os.path.isfile(page), page)
            with open(page) as f:
                text = f.read().replace("\\-", "-")
            for opt in long_options_of(path):
                self.assertIn(opt, text, f"{page} lacks {opt}")

    @unittest.skipUnless(shutil.which("man"), "man not installed")
    def test_pages_render(self):
        p = subprocess.run(["man", "-l", os.path.join(MAN1, "ccdiag-diagnose.1")], capture_output=True, text=True,
                           env=dict(os.environ, MANWIDTH="100", MANPAGER="cat", PAGER="cat"), timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("CCDIAG-DIAGNOSE(1)", p.stdout)
        self.assertIn("--json", p.stdout)
        self.assertNotIn("warning", p.stderr)


class BashCompletion(unittest.TestCase):
    def complete(self, *words):
        script = (f"source {os.path.join(COMPLETIONS, 'ccdiag.bash')}\n"
                  f"COMP_WORDS=({' '.join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}\n"
                  "_ccdiag; printf '%s\\n' \"${COMPREPLY[@]}\"\n")
        p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        return [w for w in p.stdout.splitlines() if w]

    def test_registered(self):
        p = subprocess.run(["bash", "-c", f"source {os.path.join(COMPLETIONS, 'ccdiag.bash')}; complete -p ccdiag"],
                           capture_output=True, text=True, timeout=30)
        self.assertIn("-F _ccdiag ccdiag", p.stdout)

    def test_subcommands_options_and_values(self):
        self.assertEqual(sorted(self.complete("ccdiag", "pro")), ["probe", "prom"])
        self.assertEqual(sorted(self.complete("ccdiag", "probe", "")), sorted(subcommands_of(["probe"])))
        self.assertIn("--json", self.complete("ccdiag", "diagnose", "--js"))
        self.assertIn("--markdown", self.complete("ccdiag", "--verbose", "diagnose", "--mark"))
        # A value option completes file names, not subcommands.
        with tempfile.TemporaryDirectory() as d:
            open(os.path.join(d, "rank0.log"), "w").close()
            self.assertEqual(self.complete("ccdiag", "diagnose", "--log", os.path.join(d, "ra")),
                             [os.path.join(d, "rank0.log")])


@unittest.skipUnless(shutil.which("fish"), "fish not installed")
class FishCompletion(unittest.TestCase):
    def complete(self, line):
        p = subprocess.run(["fish", "--no-config", "-c",
                            f"source {os.path.join(COMPLETIONS, 'ccdiag.fish')}; complete -C '{line}'"],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        return [l.split("\t")[0] for l in p.stdout.splitlines()]

    def test_subcommands_and_options(self):
        self.assertEqual(sorted(self.complete("ccdiag pro")), ["probe", "prom"])
        self.assertIn("pcie", self.complete("ccdiag probe "))
        self.assertIn("--json", self.complete("ccdiag diagnose --js"))


@unittest.skipUnless(shutil.which("zsh"), "zsh not installed")
class ZshCompletion(unittest.TestCase):
    def complete(self, *words):
        # _describe and _files stubbed: print what would be offered.
        script = ("_describe() { local arr=${@[-1]}; print -l -- ${(P)arr} }\n_files() { print FILES }\n"
                  f"words=({' '.join(repr(w) for w in words)}); CURRENT={len(words)}; PREFIX={words[-1]!r}\n"
                  f"source {os.path.join(COMPLETIONS, '_ccdiag')}\n")
        p = subprocess.run(["zsh", "-f", "-c", script], capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        return [l.split(":")[0] for l in p.stdout.splitlines()]

    def test_subcommands_and_options(self):
        self.assertIn("probe", self.complete("ccdiag", "pro"))
        self.assertIn("pcie", self.complete("ccdiag", "probe", ""))
        self.assertIn("--json", self.complete("ccdiag", "diagnose", "--"))


class Install(unittest.TestCase):
    def test_cmake_install_layout(self):
        with tempfile.TemporaryDirectory() as prefix:
            p = subprocess.run(["cmake", "--install", BUILD_DIR, "--prefix", prefix], capture_output=True, text=True,
                               timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            for rel in ("bin/ccdiag", "lib/ccdiag/libnccl-profiler-ccdiag.so", "share/man/man1/ccdiag.1",
                        "share/man/man1/ccdiag-probe-pcie.1", "share/bash-completion/completions/ccdiag",
                        "share/zsh/vendor-completions/_ccdiag", "share/fish/vendor_completions.d/ccdiag.fish",
                        "share/doc/ccdiag/README.md", "share/doc/ccdiag/exit-codes.md"):
                self.assertTrue(os.path.exists(os.path.join(prefix, rel)), rel)
            v = subprocess.run([os.path.join(prefix, "bin", "ccdiag"), "--version"], capture_output=True, text=True)
            self.assertEqual(v.returncode, 0)
            self.assertRegex(v.stdout, r"^\d+\.\d+\.\d+")


if __name__ == "__main__":
    unittest.main()
