"""Explorer and figures for ch11 RDMA基础: InfiniBand与RoCEv2.

- ``pfc_headroom_explorer()``: port speed, cable length and medium, MTU, lossless priorities and
  switch ports -> the four components of the PFC headroom of one port and the switch total
  (``rdma.pfc_headroom``).
- ``ib_rates_figure()``: line (signalling) rate vs data rate of a 4X IB port, SDR..XDR.
- ``headroom_vs_length_figure()``: headroom per port vs cable length for 25/100/400G.
- ``ecn_dcqcn_figure()``: DCQCN's ECN marking curve and the sender's rate after successive CNPs.

Axis labels in English with units; the explorer updates artists in place (< 50 ms).
"""

from __future__ import annotations

import numpy as np

from .. import rdma
from .. import widgets as w
from ..plotting import PALETTE, new_figure, reset_axes
from ..widgets import Explorer

__all__ = ["pfc_headroom_explorer", "ib_rates_figure", "headroom_vs_length_figure", "ecn_dcqcn_figure"]

_PARTS = ("MTU (receiver)", "cable round trip", "sender reaction", "MTU (sender)")


def _headroom_model(port_gbps, cable_m, mtu_bytes, medium, priorities, ports):
    h = rdma.pfc_headroom(float(port_gbps), float(cable_m), mtu_bytes=float(mtu_bytes), medium=medium)
    return {"parts_b": [h["mtu_receiver_b"], h["cable_b"], h["response_b"], h["mtu_sender_b"]],
            "per_port_b": h["total_b"], "switch_b": h["total_b"] * int(priorities) * int(ports)}


def _headroom_draw(fig, res, values):
    ax = fig.axes[0]
    st = fig.__dict__.setdefault("_lab_state", {})
    kb = [v / 1e3 for v in res["parts_b"]]
    if "bars" not in st:
        reset_axes(ax)
        st["bars"] = ax.barh(range(4), kb, color=PALETTE[:4])
        ax.set_yticks(range(4), list(_PARTS))
        ax.invert_yaxis()
        ax.set_xlabel("Headroom per port and lossless priority (KB)")
        st["labels"] = [ax.text(0, i, "", va="center", fontsize=9) for i in range(4)]
        st["title"] = ax.set_title("")
    for i, (b, v) in enumerate(zip(st["bars"], kb)):
        b.set_width(v)
        st["labels"][i].set_position((v, i))
        st["labels"][i].set_text(f" {v:.1f}")
    ax.set_xlim(0, max(kb) * 1.3)
    n_prio = int(values["priorities"])
    st["title"].set_text(f"Per port {res['per_port_b'] / 1e3:.1f} KB; switch ({values['ports']} ports x "
                         f"{n_prio} {'priority' if n_prio == 1 else 'priorities'}) {res['switch_b'] / 1e6:.2f} MB")


#: Beyond this length a copper run is not a real option: direct-attach copper reaches 5 m at 100G
#: (IEEE 802.3bj 100GBASE-CR4) and 2 m at 100G-per-lane rates (IEEE 802.3ck 400GBASE-CR4); the explorer
#: still computes a longer copper run, and says so.
COPPER_PRACTICAL_MAX_M = 5.0


def _headroom_summary(res, values):
    note = ""
    if values["medium"] == "copper" and float(values["cable_m"]) > COPPER_PRACTICAL_MAX_M:
        note = (f"<br>注意：铜缆（DAC）在 100–400G 下只有几米长（机柜内），{float(values['cable_m']):g} 米只能用光纤；"
                "这里按铜缆的传播速度照算，只为和光纤对比。")
    return (f"每端口每个无损优先级需要 <b>{res['per_port_b'] / 1e3:.1f} KB</b> headroom；整台交换机 "
            f"<b>{res['switch_b'] / 1e6:.2f} MB</b> 的缓存要预留给「PAUSE 发出后仍会到达」的数据。{note}")


def pfc_headroom_explorer() -> Explorer:
    """ch11: PFC headroom of one port and of a whole switch."""
    controls = {
        "port_gbps": w.choice_slider("端口速率 Gb/s", sorted(rdma.PAUSE_REACTION_QUANTA), 400),
        "cable_m": w.slider("线缆长度 (m)", 100.0, 1.0, 2000.0, 1.0),
        "mtu_bytes": w.choice_slider("最大帧 MTU (B)", [1500, 4200, 9216], 9216),
        "medium": w.dropdown("介质", list(rdma.PROPAGATION_S_PER_M), "fiber"),
        "priorities": w.int_slider("无损优先级数", 1, 1, 2),
        "ports": w.choice_slider("交换机端口数", [32, 64, 128], 64),
    }
    return Explorer(controls, _headroom_model, _headroom_draw, summary=_headroom_summary,
                    title="PFC headroom：PAUSE 之后还会到达多少数据", figsize=(8.5, 3.4))


def ib_rates_figure():
    """4X InfiniBand port: signalling rate vs data rate after encoding/FEC, SDR..XDR (log scale)."""
    rows = rdma.ib_rate_table(4)
    fig, ax = new_figure(figsize=(8.5, 4.2))
    x = np.arange(len(rows))
    ax.bar(x - 0.2, [r["port_signal_gbps"] for r in rows], 0.4, color=PALETTE[7], label="line rate (signalling)")
    ax.bar(x + 0.2, [r["port_gbps"] for r in rows], 0.4, color=PALETTE[0], label="data rate (after encoding/FEC)")
    for xi, r in zip(x, rows):
        ax.text(xi + 0.2, r["port_gbps"] * 1.1, f"{r['port_gbps']:.0f}", ha="center", fontsize=8)
    ax.set_xticks(x, [f"{r['gen']}\n{r['encoding'].split(',')[0].split(' ')[0]}" for r in rows], fontsize=8)
    ax.set_yscale("log")
    ax.set_ylim(5, 2000)
    ax.set_ylabel("4X port rate (Gbit/s, log scale)")
    ax.set_title("InfiniBand generations: 8b/10b -> 64b/66b -> PAM4 + FEC")
    ax.legend(loc="upper left")
    return fig


def headroom_vs_length_figure(mtu_bytes: float = 9216):
    """PFC headroom per port vs cable length (fibre), one line per port speed of Table 31B-1."""
    length = np.linspace(1.0, 2000.0, 200)
    fig, ax = new_figure(figsize=(8.0, 4.0))
    for i, speed in enumerate((25, 100, 400)):
        h = rdma.pfc_headroom(speed, length, mtu_bytes=mtu_bytes)["total_b"]
        ax.plot(length, h / 1e3, color=PALETTE[i], lw=2, label=f"{speed} Gb/s")
    ax.set_xlabel("Cable length (m, fibre)")
    ax.set_ylabel("Headroom per port and priority (KB)")
    ax.set_title(f"PFC headroom grows with speed x distance (MTU {mtu_bytes:.0f} B)")
    ax.legend()
    return fig


def ecn_dcqcn_figure(line_gbps: float = 400.0):
    """Left: DCQCN ECN marking probability vs queue depth. Right: sender rate after successive CNPs."""
    fig, (ax1, ax2) = new_figure(1, 2, figsize=(9.5, 3.8))
    q = np.linspace(0, 250e3, 500)
    ax1.plot(q / 1e3, 100 * rdma.ecn_mark_probability(q), color=PALETTE[3], lw=2)
    ax1.set_ylim(0, 2.0)
    ax1.axvline(rdma.DCQCN_KMIN_BYTES / 1e3, color="gray", ls=":", lw=1)
    ax1.axvline(rdma.DCQCN_KMAX_BYTES / 1e3, color="gray", ls=":", lw=1)
    ax1.text(rdma.DCQCN_KMIN_BYTES / 1e3 + 3, 1.95, "Kmin", fontsize=8, va="top")
    ax1.text(rdma.DCQCN_KMAX_BYTES / 1e3 + 3, 1.95, "Kmax\n(then 100 %)", fontsize=8, va="top")
    ax1.set_xlabel("Egress queue depth (KB)")
    ax1.set_ylabel("ECN marking probability (%)")
    ax1.set_title("Switch: RED-style ECN marking")
    rates = rdma.dcqcn_rate_after_cnps(line_gbps, 8)
    ax2.step(np.arange(len(rates)), rates, where="post", color=PALETTE[0], lw=2)
    ax2.set_yscale("log")
    ax2.set_xlabel("Consecutive CNPs received")
    ax2.set_ylabel("Sender rate (Gbit/s, log scale)")
    ax2.set_title("NIC: DCQCN cut Rc <- Rc (1 - alpha/2)")
    return fig
