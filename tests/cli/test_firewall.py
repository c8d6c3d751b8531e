"""host.firewall from a tree's captured `nft -j list ruleset` or
`iptables-save` output: whether a peer may connect to the ephemeral range
where NCCL and Gloo listen. A drop policy with only ssh open on every host
makes firewall_blocked_ports the leading candidate; an open range does not;
a ruleset the check cannot judge is unknown, never 'open'."""
import json
import os
import tempfile
import unittest

from ccdiag_test import run, run_json

SSH_ONLY = {"nftables": [
    {"metainfo": {"version": "1.0.6", "release_name": "Lester Gooch #5", "json_schema_version": 1}},
    {"table": {"family": "inet", "name": "filter", "handle": 1}},
    {"chain": {"family": "inet", "table": "filter", "name": "input", "handle": 1, "type": "filter", "hook": "input",
               "prio": 0, "policy": "drop"}},
    {"rule": {"family": "inet", "table": "filter", "chain": "input", "handle": 4,
              "expr": [{"match": {"op": "in", "left": {"ct": {"key": "state"}}, "right": ["established", "related"]}},
                       {"accept": None}]}},
    {"rule": {"family": "inet", "table": "filter", "chain": "input", "handle": 6,
              "expr": [{"match": {"op": "==", "left": {"payload": {"protocol": "tcp", "field": "dport"}}, "right": 22}},
                       {"accept": None}]}}]}

IPTABLES_OPEN = ("*filter\n:INPUT DROP [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT ACCEPT [0:0]\n"
                 "-A INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n"
                 "-A INPUT -p tcp -m tcp --dport 1024:65535 -j ACCEPT\nCOMMIT\n")


class Firewall(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def host(self, name, nft=None, iptables=None):
        root = os.path.join(self.tmp, name + "-root")
        os.makedirs(os.path.join(root, "proc/sys/kernel"))
        os.makedirs(os.path.join(root, "proc/sys/net/ipv4"))
        with open(os.path.join(root, "proc/sys/kernel/hostname"), "w") as f:
            f.write(name + "\n")
        with open(os.path.join(root, "proc/sys/net/ipv4/ip_local_port_range"), "w") as f:
            f.write("32768\t60999\n")
        if nft is not None:
            with open(os.path.join(root, "nft-ruleset.json"), "w") as f:
                json.dump(nft, f)
        if iptables is not None:
            with open(os.path.join(root, "iptables-save.txt"), "w") as f:
                f.write(iptables)
        out = os.path.join(self.tmp, name)
        p = run(["--root", root, "--timeout", "5", "collect", "--out", out])
        self.assertIn(p.returncode, (0, 3), p.stderr)
        with open(os.path.join(out, "evidence.json")) as f:
            [fw] = [e for e in json.load(f)["evidence"] if e["kind"] == "host.firewall"]
        return out, fw

    def test_drop_policy_with_ssh_only_blocks_and_leads(self):
        b1, fw = self.host("node1", nft=SSH_ONLY)
        self.assertEqual(fw["data"]["allows_ephemeral"], False)
        self.assertEqual(fw["data"]["input_policy"], "drop")
        self.assertEqual(fw["data"]["ephemeral_range"], "32768-60999")
        b2, _ = self.host("node2", nft=SSH_ONLY)
        doc, _ = run_json(["diagnose", b1, b2])
        ranked = [doc["verdict"]["root_cause"]] + [a["root_cause"] for a in doc["alternatives"]]
        self.assertEqual(ranked[0] if ranked[0] != "insufficient_evidence" else ranked[1], "firewall_blocked_ports")

    def test_open_range_in_iptables_save_allows(self):
        b, fw = self.host("node1", iptables=IPTABLES_OPEN)
        self.assertEqual(fw["data"]["allows_ephemeral"], True)
        doc, _ = run_json(["diagnose", b])
        self.assertNotIn("firewall_blocked_ports", [doc["verdict"]["root_cause"]] +
                         [a["root_cause"] for a in doc["alternatives"]])

    def test_unjudgeable_ruleset_is_unknown(self):
        nft = json.loads(json.dumps(SSH_ONLY))
        nft["nftables"].append({"rule": {"family": "inet", "table": "filter", "chain": "input", "handle": 9,
                                         "expr": [{"jump": {"target": "filter_INPUT_ZONES"}}]}})
        nft["nftables"][3], nft["nftables"][-1] = nft["nftables"][-1], nft["nftables"][3]
        _, fw = self.host("node1", nft=nft)
        self.assertNotIn("allows_ephemeral", fw["data"])
        self.assertIn("cannot judge", fw["data"]["why"])

    def test_no_captured_ruleset_is_unavailable(self):
        _, fw = self.host("node1")
        self.assertEqual(fw["availability"]["state"], "unavailable")


if __name__ == "__main__":
    unittest.main()
