"""Chapter 11 exercises: IB encoding, PFC headroom, gradient sync per port speed, DCQCN, pause counters.

Hints and worked solutions quote numbers computed by the same model calls as the answers (at import).
"""

from .. import links, rdma
from ..parsers.ethtool import parse_ethtool_stats
from ..parsers import samples
from ..parsers.show_gids import parse_show_gids
from ..parsers.perftest import mb_per_sec_to_gbps
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))

def _sync(nic: int) -> dict:
    return rdma.dp_gradient_sync(70e9, 2048, tp=8, pp=8, nic_gbps=nic, global_batch_tokens=4e6)


def _sol_2() -> str:
    h = rdma.pfc_headroom(100, 300, mtu_bytes=9216)
    return (f"{h['mtu_receiver_b']:,.0f} + {h['mtu_sender_b']:,.0f} + {h['cable_b']:,.0f}（线缆往返）+ "
            f"{h['response_b']:,.0f}（394 × 512 / 8）= {h['total_b']:,.0f} B ≈ {h['total_b'] / 1e3:.0f} KB。")


def _sol_3() -> str:
    r = _sync(200)
    return (f"all-reduce ≈ {r['sync_s']:.3f} s，计算 {r['compute_s']:.2f} s，比值 ≈ {r['sync_ratio']:.3f}，即 "
            f"{100 * r['sync_ratio']:.1f} %：200G 也只暴露约一成的通信，再加重叠几乎可以全部隐藏。")

register(Exercise(
    key="ch11.1",
    prompt="FDR InfiniBand signals at 14.0625 Gbaud per lane with 64b/66b encoding. Data rate of a 4X FDR port, in Gb/s?",
    answer=lambda: links.ib_port_gbps("FDR", 4),
    unit="Gb/s", rtol=0.01,
    hints=("数据速率 = 每 lane 信号速率 × 编码效率 × lane 数。", "64b/66b 的效率是 64/66 ≈ 0.970。"),
    solution_text="14.0625 × 64/66 × 4 = 54.5 Gb/s（市场上叫「56G」，那是信号速率）。",
))

register(Exercise(
    key="ch11.2",
    prompt=("PFC headroom of one 100GbE port, 300 m of single-mode fibre, largest frame 9,216 B, sender reaction per "
            "IEEE 802.3 Table 31B-1 (394 pause quanta). In bytes?"),
    answer=lambda: rdma.pfc_headroom(100, 300, mtu_bytes=9216)["total_b"],
    unit="B", rtol=0.02,
    hints=("H = MTU_R + MTU_S + R × 2 × L × t_m / 8 + 反应时间/8；光纤 t_m = 5.13 ns/m。",
           "反应时间 = 394 × 512 bit；线缆项 = 100e9 × 2 × 300 × 5.13e-9 / 8 字节。"),
    solution_text=_sol_2(),
))

register(Exercise(
    key="ch11.3",
    prompt=("Seed 003 LLM case: 70B model on 2,048 H100 (TP 8 x PP 8 -> DP 32), 4M tokens per step, MFU 0.45. With ONE "
            "200 Gb/s port per GPU, gradient all-reduce time as a percent of the compute time per step?"),
    answer=lambda: 100 * rdma.dp_gradient_sync(70e9, 2048, nic_gbps=200)["sync_ratio"],
    unit="%", rtol=0.03,
    params={"rdma.dp_gradient_sync": {"params": 70e9, "n_gpus": 2048, "tp": 8, "pp": 8, "nic_gbps": 200, "global_batch_tokens": 4e6}},
    hints=("每卡梯度分片 = 70e9 / 64 × 2 B = 2.19 GB；DP 32 个副本（每节点一个）做 ring all-reduce，走这张卡自己的轨道，"
           "NCCL 能用到线速的 0.96（labutil.cluster），即 200/8 × 0.96 = 24 GB/s。",
           "每卡计算时间 = 6 × 70e9 × 4e6 / (2048 × 989.4e12 × 0.45)。"),
    solution_text=_sol_3(),
))

register(Exercise(
    key="ch11.4",
    prompt="A 400 Gb/s RoCE flow receives 3 CNPs in a row (DCQCN, alpha starting at 1, g = 1/256). Its rate afterwards, in Gb/s?",
    answer=lambda: float(rdma.dcqcn_rate_after_cnps(400, 3)[-1]),
    unit="Gb/s", rtol=0.02,
    hints=("每个 CNP：Rc ← Rc × (1 − α/2)，然后 α ← (1 − g)α + g。", "α 从 1 开始，g 很小，α 基本保持 1。"),
    solution_text="400 → 200 → 100 → 50 Gb/s：每个 CNP 减半。之后靠定时器和字节计数器逐步恢复（fast recovery / additive increase）。",
))


def _smallest_nic_for_sync_ratio(max_ratio: float = 0.10, options=(100, 200, 400)) -> str:
    """Smallest per-GPU NIC speed (Gb/s) among ``options`` whose DP sync/compute ratio is <= max_ratio."""
    for nic in sorted(options):
        if _sync(nic)["sync_ratio"] <= max_ratio:
            return str(nic)
    raise ValueError(f"no NIC speed in {options} keeps sync/compute <= {max_ratio}")


def _why_ch11_5(option: str) -> str:
    """Why NIC ``option`` is not the answer: its sync/compute ratio, and the next slower NIC's when it passes."""
    def ratio(nic: int) -> float:
        return rdma.dp_gradient_sync(70e9, 2048, tp=8, pp=8, nic_gbps=nic, global_batch_tokens=4e6)["sync_ratio"]

    nic = int(option)
    if ratio(nic) > 0.10:
        return f"每卡 {nic}G 时梯度同步 / 计算 = {ratio(nic):.1%}，超过 10 %"
    return (f"每卡 {nic}G 时同步 / 计算 = {ratio(nic):.1%}，够用，但题目问的是最慢的一档："
            f"低一档时也只有 {ratio(nic // 2):.1%} ≤ 10 %")


register(Exercise(
    key="ch11.5",
    prompt=("Judgement. Seed 003 LLM case (70B, 2,048 H100, TP 8 x PP 8, 4M tokens per step, MFU 0.45): the slowest "
            "per-GPU NIC, among '100', '200' and '400' Gb/s, that keeps the gradient all-reduce at most 10 percent "
            "of the compute time? Answer with the string '100', '200' or '400'."),
    answer=lambda: _smallest_nic_for_sync_ratio(0.10),
    choices=("100", "200", "400"), synonyms={"100": ("100g", "100 gb/s"), "200": ("200g", "200 gb/s"),
                                             "400": ("400g", "400 gb/s")}, kind="judgement",
    explain=_why_ch11_5,
    params={"rdma.dp_gradient_sync": {"params": 70e9, "n_gpus": 2048, "tp": 8, "pp": 8, "global_batch_tokens": 4e6}},
    hints=("用第 6 节的表：同步时间与网卡带宽成反比，比值 = 同步时间 / 计算时间。",
           "，".join(f"{g}G 约 {100 * _sync(g)['sync_ratio']:.1f}%" for g in (400, 200, 100)) + "：找最慢的、仍不超过 10% 的那一档。"),
    solution_text=(f"{_smallest_nic_for_sync_ratio(0.10)}：sync/compute 在 200G 时约 {_sync(200)['sync_ratio']:.3f}，"
                   f"100G 时约 {_sync(100)['sync_ratio']:.3f}，400G 时约 {_sync(400)['sync_ratio']:.3f}。每卡 400G 是留了一倍余量的配置，"
                   "200G 刚好够用；MoE 的 all-to-all 或更大的 DP 会吃掉这点余量（第 14 章）。"),
))

register(Exercise(
    key="ch11.6",
    prompt=("Pen and paper. ib_write_bw without --report_gbits prints BW average[MB/sec] = 11,000; perftest's MB is "
            "2^20 bytes. The bandwidth in Gb/s (1e9 bit/s)?"),
    answer=lambda: float(mb_per_sec_to_gbps(11000.0)),
    unit="Gb/s", rtol=0.01, kind="by_hand",
    slip_families=("prefix", "binary", "bits"),   # the point of the exercise: perftest's MB is 2^20 B
    hints=("1 MB（perftest）= 1,048,576 字节，1 字节 = 8 比特。",
           "11,000 × 1,048,576 × 8 / 1e9。"),
    solution_text=("11,000 × 1,048,576 × 8 / 1e9 ≈ 92.3 Gb/s。若把 MB 当成 1e6 字节会得到 88.0 Gb/s，"
                   "少算 4.9%，足以把一条健康的 100G 链路误判为降速。"),
))



def _ethtool_sample_verdict() -> str:
    stats = parse_ethtool_stats(samples.sample("ethtool_S_mlx5_public"))
    return "this port" if rdma.diagnose_pause(stats.counters, priority=None).who_sends_pause in ("this port", "both") \
        else "the network"


def _why_ch11_7(option: str) -> str:
    """Why ``option`` is the wrong party: the pause counters of the real dump, sent vs received."""
    c = parse_ethtool_stats(samples.sample("ethtool_S_mlx5_public")).counters
    tx, rx = c.get("tx_pause_ctrl_phy", 0), c.get("rx_pause_ctrl_phy", 0)
    return (f"看 pause 的方向：这个端口发出的 pause（tx_pause_ctrl_phy）= {tx:,}，收到的（rx_pause_ctrl_phy）= {rx:,}。"
            f"发 pause 的一方才是处理不过来的一方，计数器指向的不是「{option}」")


register(Exercise(
    key="ch11.7",
    prompt=("Judgement. In the chapter's real `ethtool -S` dump of an mlx5 port (sample 'ethtool_S_mlx5_public'), who is "
            "the congested party that pause frames point at: 'this port' (its receive path cannot keep up) or "
            "'the network' (the next hop cannot absorb what this port sends)?"),
    answer=_ethtool_sample_verdict,
    explain=_why_ch11_7,
    choices=("this port", "the network"),
    synonyms={"this port": ("this nic", "host", "receiver", "本机", "本端", "网卡"),
              "the network": ("network", "switch", "peer", "网络", "交换机", "对端")},
    kind="judgement",
    hints=("谁发 pause，谁就是拥塞的一方：tx_* 是这个端口发出去的 pause，rx_* 是它收到的。",
           "看 tx_pause_ctrl_phy、rx_pause_ctrl_phy（没有出现的计数器为 0），再看 rx_discards_phy 和 rx_out_of_buffer。"),
    solution_text=("this port：它发出了 574 万多个 pause（tx_pause_ctrl_phy），自己一个也没收到；同时 rx_discards_phy 和 "
                   "rx_out_of_buffer 巨大——接收侧（这里是单核跑 XDP 处理 64 字节小包）跟不上，网卡缓冲满了就向上游发 pause，"
                   "pause 不够用时照样丢包。该查的是主机：中断/核数、PCIe、接收队列，而不是交换机。"),
))


def _gid_table():
    return parse_show_gids(samples.sample("show_gids_public"))


def _why_ch11_8(option: str) -> str:
    """Why GID index ``option`` is wrong: its RoCE version and address in the real table."""
    e = next((x for x in _gid_table().entries if x.index == int(option)), None)
    if e is None:
        return f"这张表里没有 index {option}"
    where = "链路本地地址（fe80::）" if e.link_local else f"IPv4 地址 {e.ipv4}"
    why = ("RoCE v1 直接跑在以太网帧里，出不了二层域" if e.version == "v1" else
           "链路本地地址不能跨子网路由")
    return f"index {option} 是 RoCE {e.version} + {where}：{why}"


register(Exercise(
    key="ch11.8",
    prompt=("Judgement. In the chapter's real `show_gids` output (sample 'show_gids_public'), which GID index must "
            "`ib_write_bw -x` (or NCCL_IB_GID_INDEX on NCCL before 2.21) get for RoCE traffic across IP subnets: "
            "'0', '1', '2' or '3'?"),
    answer=lambda: str(_gid_table().roce_v2_index("mlx5_0")),
    choices=("0", "1", "2", "3"),
    explain=_why_ch11_8,
    kind="judgement",
    hints=("每个 IP 在 GID 表里出现两次：一次 RoCE v1（VER 列 v1），一次 RoCE v2（v2）。只有 RoCE v2 封装在 UDP/IP 里、能被路由。",
           "再排除 fe80:: 开头的链路本地地址：要的是 VER = v2 且 IPv4 列有地址的那一行。"),
    solution_text=("3：index 3 是 RoCE v2 + 192.168.211.242（本机的 IPv4 地址），封装在 UDP/IP 里、可以跨子网路由，也能带上为 RoCE 配好的 "
                   "DSCP/ECN。index 0/1 是链路本地地址（fe80::），index 2 是同一个 IP 的 RoCE v1，都出不了二层域。"
                   "NCCL 2.21 起默认自动挑这一行，更早的版本默认用 index 0。"),
))
