# SPDX-License-Identifier: GPL-2.0-or-later
"""The state smartio list shows says what can be reached (issue 32, item
10): a device whose lender is down reads lender-down, one whose lender's
every link is down reads cut-off, in the table, the tree, -J ("reach",
"unreachable", with "state" still the file's) and show; with the links
back it reads its state file's word again."""
import json

from smartio import cli


def listing(capsys, mount, *args):
    assert cli.main(["-m", mount, "list"] + list(args)) == 0
    return capsys.readouterr()[0]


def states(capsys, mount):
    rows = listing(capsys, mount, "-o", "device,state").splitlines()[1:]
    return dict(r.split() for r in rows)


def test_a_lender_down_is_shown(two, capsys):
    a, b = two          # host0 and host1 served; host2 and host3 are not
    st = states(capsys, a.root)
    assert {d: st[d] for d in ("acc0", "nvme2", "acc1", "nic1")} == dict.fromkeys(
        ("acc0", "nvme2", "acc1", "nic1"), "lender-down")
    assert st["nvme0"] == "local" and st["nvme1"] == "local"
    j = {d["name"]: d for d in json.loads(listing(capsys, a.root, "-J"))["devices"]}
    assert (j["acc0"]["state"], j["acc0"]["reach"], j["acc0"]["unreachable"]) == (
        "local", "lender-down", "its lender host2 is down")
    assert (j["nvme1"]["reach"], j["nvme1"]["unreachable"]) == ("ok", None)
    assert "acc0  0000:01:00.0  Processing accelerators  lender-down" in \
        listing(capsys, a.root, "--tree")


def test_a_lender_cut_off_is_shown_until_its_link_is_back(cluster, capsys):
    link = cluster.path("nodes/host2/adapters/ntb0/link")
    with open(link, "w") as f:
        f.write("down")
    assert states(capsys, cluster.root)["acc0"] == "cut-off"
    assert cli.main(["-m", cluster.root, "show", "acc0"]) == 0
    assert "; unreachable: every link of its lender host2 is down" in capsys.readouterr()[0]
    with open(link, "w") as f:
        f.write("up")
    assert states(capsys, cluster.root)["acc0"] == "local"
