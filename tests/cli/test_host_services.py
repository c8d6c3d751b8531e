"""Producers of host.logind, host.resolve and net.link read through --root as
a real host lays those files out, and the decision tree weighs what they
write: a loopback host name across two hosts leads, on one host it is only a
lead; RemoveIPC=yes alone (systemd's default) is never a verdict."""
import json
import os
import tempfile
import unittest

from ccdiag_test import run, run_json


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def make_root(base, host, hosts_line, ib_mtu="4092"):
    root = os.path.join(base, host + "-root")
    write(root, "proc/sys/kernel/hostname", host + "\n")
    write(root, "etc/hosts", "127.0.0.1 localhost\n" + hosts_line + "\n")
    os.makedirs(os.path.join(root, "run/systemd/system"), exist_ok=True)
    # Debian's shipped logind.conf: every key commented out (defaults apply).
    write(root, "etc/systemd/logind.conf", "[Login]\n#KillUserProcesses=no\n#RemoveIPC=yes\n")
    for attr, value in (("mtu", ib_mtu), ("operstate", "up"), ("carrier", "1"), ("speed", "200000")):
        write(root, f"sys/class/net/ib0/{attr}", value + "\n")
    return root


def evidence(bundle, kind):
    with open(os.path.join(bundle, "evidence.json")) as f:
        return [e for e in json.load(f)["evidence"] if e["kind"] == kind]


class HostServiceProducers(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def collect(self, root, name):
        out = os.path.join(self.tmp, name)
        p = run(["--root", root, "--timeout", "5", "collect", "--out", out])
        self.assertIn(p.returncode, (0, 3), p.stderr)
        return out

    def test_logind_default_and_drop_in_order(self):
        root = make_root(self.tmp, "node1", "10.0.0.1 node1")
        b = self.collect(root, "b0")
        [e] = evidence(b, "host.logind")
        self.assertEqual(e["data"]["remove_ipc"], True)
        self.assertEqual(e["data"]["set_by"], "systemd default")
        # Drop-ins apply by file name across directories; /etc masks /usr/lib.
        write(root, "usr/lib/systemd/logind.conf.d/10-site.conf", "[Login]\nRemoveIPC=yes\n")
        write(root, "etc/systemd/logind.conf.d/10-site.conf", "[Login]\nRemoveIPC=no\n")
        write(root, "usr/lib/systemd/logind.conf.d/05-early.conf", "[Login]\nRemoveIPC=yes\n")
        [e] = evidence(self.collect(root, "b1"), "host.logind")
        self.assertEqual(e["data"]["remove_ipc"], False)
        self.assertEqual(e["data"]["set_by"], "/etc/systemd/logind.conf.d/10-site.conf")
        self.assertNotIn("/usr/lib/systemd/logind.conf.d/10-site.conf", e["data"]["files"])

    def test_no_systemd_means_nothing_removes_ipc(self):
        root = make_root(self.tmp, "node1", "10.0.0.1 node1")
        os.rmdir(os.path.join(root, "run/systemd/system"))
        os.remove(os.path.join(root, "etc/systemd/logind.conf"))
        [e] = evidence(self.collect(root, "b"), "host.logind")
        self.assertEqual(e["data"]["remove_ipc"], False)

    def test_resolve_and_net_link(self):
        root = make_root(self.tmp, "node1", "127.0.1.1 node1.cluster node1")
        b = self.collect(root, "b")
        [r] = evidence(b, "host.resolve")
        self.assertEqual(r["data"]["addr"], "127.0.1.1")
        self.assertTrue(r["data"]["loopback"])
        [ib] = [e for e in evidence(b, "net.link") if e["data"]["netdev"] == "ib0"]
        self.assertEqual(ib["data"]["mtu"], 4092)
        self.assertEqual(ib["data"]["speed_mbps"], 200000)
        self.assertEqual(ib["data"]["operstate"], "up")

    def test_name_missing_from_hosts_is_unchecked_not_healthy(self):
        root = make_root(self.tmp, "node1", "10.0.0.2 other")
        [r] = evidence(self.collect(root, "b"), "host.resolve")
        self.assertEqual(r["availability"]["state"], "unavailable")

    def test_loopback_name_on_two_hosts_leads_on_one_host_does_not(self):
        b1 = self.collect(make_root(self.tmp, "node1", "127.0.1.1 node1"), "b1")
        b2 = self.collect(make_root(self.tmp, "node2", "127.0.1.1 node2"), "b2")
        two, _ = run_json(["diagnose", b1, b2])
        ranked = [two["verdict"]["root_cause"]] + [a["root_cause"] for a in two["alternatives"]]
        self.assertIn("hostname_resolves_to_loopback", ranked[:2])
        one, _ = run_json(["diagnose", b1])
        self.assertNotEqual(one["verdict"]["root_cause"], "hostname_resolves_to_loopback")
        self.assertLess(one["verdict"]["confidence"], 0.5)
        # RemoveIPC=yes (the default) is on both hosts and is never the answer alone.
        self.assertNotEqual(two["verdict"]["root_cause"], "removeipc_deletes_shm")

    def test_netdev_mtu_that_differs_across_hosts_is_named(self):
        b1 = self.collect(make_root(self.tmp, "node1", "10.0.0.1 node1"), "b1")
        b2 = self.collect(make_root(self.tmp, "node2", "10.0.0.2 node2"), "b2")
        b3 = self.collect(make_root(self.tmp, "node3", "10.0.0.3 node3", ib_mtu="2044"), "b3")
        doc, _ = run_json(["diagnose", b1, b2, b3])
        text = json.dumps(doc)
        self.assertIn("mtu_mismatch", [doc["verdict"]["root_cause"]] + [a["root_cause"] for a in doc["alternatives"]])
        self.assertIn("node3", text)


if __name__ == "__main__":
    unittest.main()
