# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 第26章 监控与告警：DCGM、Prometheus、XID/ECC 与慢卡检测
#
# > 模块六「推理、运维与实战」的第 26 章。前置：第 23 章（健康检查与验收：nvidia-smi、dcgmi diag、XID 的解析与规则），
# > 第 13–14 章（集合通信与同步训练的步长构成），第 5 章（停机成本）。后续：第 27 章用本章的告警去驱动自动重启与节点隔离，
# > 第 28 章用本章的指标做分层故障定位。
#
# ## 学习目标
#
# 学完本章，你应该能够：
#
# - 说清楚一套 GPU 集群监控栈的组成：DCGM → dcgm-exporter → Prometheus → Alertmanager/Grafana，以及「监控 Agent 部署」为什么是部署清单里不可省略的一步；
# - 读懂 `curl localhost:9400/metrics` 的 Prometheus 文本格式，区分 `DCGM_FI_DEV_GPU_UTIL` 与 `DCGM_FI_PROF_SM_ACTIVE` / `PIPE_TENSOR_ACTIVE`；
# - 用 Prometheus 的 `for:` 语义推算一条告警规则的**检测延迟**和**误报数**，并写出 PrometheusRule；
# - 识别 XID 79、不可纠正 ECC、行重映射等硬件事件，并知道哪些必须立刻隔离节点；
# - 用中位数绝对偏差（MAD）在上千个 rank 中找出慢卡，并算出一张慢卡让同步训练损失多少吞吐。

# %%
from labutil.notebook import setup, show_table
from labutil import monitoring, promrules, reliability, cost, health, hardware, manifests
from labutil.parsers import samples, parse_xid_errors, parse_nvidia_smi_q
from labutil.explore import monitoring as monitoring_x
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# ## 1. 为什么集群必须有监控：规模把小概率变成每天都发生
#
# 第 1 章算过：一万张卡、单卡 MTBF 10 万小时，每天约 2.4 次 GPU 故障；第 27 章用 Meta 公布的 Llama 3 统计
# （16,384 张 H100、54 天 419 次非计划中断）会得到更高的真实数字。对同步训练来说，**任何一张卡**出问题，整个作业要么停下来，
# 要么被它拖慢。运维团队能控制的只有两件事：**多快发现**（检测延迟）和**多快恢复**（第 27 章的重启与回滚）。
# 种子课程在「集群部署就是装驱动和配 IP」这一误区里，把「监控 Agent 部署」列为部署的必要环节之一；在「只算硬件采购成本，不算停机成本」
# 这一误区里强调，一次意外中断的恢复可能长达数小时——而其中相当一部分时间，往往花在「还没人发现它坏了」上。
#
# 一个典型的 GPU 集群监控栈是这样分层的：
#
# | 层 | 组件 | 作用 | 本章对应 |
# |---|---|---|---|
# | 采集 | DCGM（`nv-hostengine`）、NVML、内核日志 | 读取 GPU 温度、功耗、利用率、ECC、XID、NVLink 计数器 | `dcgmi discovery` / `dcgmi dmon` |
# | 暴露 | dcgm-exporter（默认端口 9400）、node-exporter、IB/RoCE exporter | 把指标变成 Prometheus 文本格式 | `curl localhost:9400/metrics` |
# | 存储与规则 | Prometheus | 每 15–30 s 抓取一次，按规则求值（`expr` + `for:`） | 告警规则引擎 |
# | 通知与展示 | Alertmanager、Grafana | 分组、抑制、路由到值班；仪表盘 | PrometheusRule |
# | 作业层 | 训练框架自报的指标（步长、吞吐、loss） | 发现慢卡、挂死 | 慢卡检测 |
#
# 有经验的运维会告诉你：GPU 的硬件指标只能告诉你「卡是不是活着」，**作业层指标**（每一步花了多久、每个 rank 算了多久）
# 才告诉你「钱是不是在变成 token」。两者都要有。
#
# ## 2. 读懂 dcgm-exporter 的输出
#
# dcgm-exporter 把 DCGM 字段（field）映射成 Prometheus 指标，名字就是字段名，例如 `DCGM_FI_DEV_GPU_TEMP`。
# 每个指标前有 `# HELP`（说明）和 `# TYPE`（gauge 或 counter），每一行样本带上标签：`gpu`、`UUID`、`pci_bus_id`、`device`、
# `modelName`、`Hostname`、驱动版本等（到 4.5.3-4.8.2 为止的发行版都写作 `Hostname`；dcgm-exporter 主干在 2026-05 的 #655 里把它改成了小写 `hostname`，
# 升级时要同步改规则和仪表盘里的标签名）。在 Kubernetes 里它还会附上 `pod`、`namespace`、`container`，
# 这正是把「哪张卡」映射到「哪个作业」的关键。下面是一份 4 卡切片的样例（格式与 dcgm-exporter 真实输出一致，数值为本课程编写），
# 用 `labutil.monitoring.parse_prometheus_text` 解析：

# %%
print(monitoring.DCGM_EXPORTER_SAMPLE_SOURCE)
print("\n".join(monitoring.DCGM_EXPORTER_SAMPLE.splitlines()[:6]))

# %%
# NBVAL_CHECK_OUTPUT
expo = monitoring.parse_prometheus_text(monitoring.DCGM_EXPORTER_SAMPLE)
rows = monitoring.gpu_metrics(expo)
print(f"{len(expo.names())} metrics, {len(expo.samples)} samples, host {rows[0]['hostname']}")
print(" gpu  util%  sm_active  tensor_active  temp_C  power_W   xid  ecc_dbe")
for r in rows:
    print(f"{r['gpu']:>4} {r['util_pct']:6.0f} {r['sm_active']:10.3f} {r['tensor_active']:14.3f} "
          f"{r['temp_c']:7.0f} {r['power_w']:8.1f} {r['xid']:5d} {r['ecc_dbe']:8d}")

# %% [markdown]
# 四张卡的 `GPU_UTIL` 有三张是 100%，但它们干的活完全不同。原因在于两个指标的定义：
#
# - `DCGM_FI_DEV_GPU_UTIL`（来自 NVML）是采样周期内「**至少有一个 kernel 在运行**」的时间比例。一个在 NCCL 里自旋等待对端的 kernel，
#   也算 100%。
# - `DCGM_FI_PROF_SM_ACTIVE` 是「SM 上至少驻留一个 warp」的周期比例，`DCGM_FI_PROF_PIPE_TENSOR_ACTIVE` 是 Tensor Core（HMMA 管线）
#   真正在算的周期比例。它们来自 DCGM 的 profiling（DCP）指标；dcgm-exporter 导出哪些字段由它的计数器 CSV 决定，
#   而 `SM_ACTIVE` 在两份官方 CSV 里都是注释掉的（第 6 节给出要改哪一行）。
#
# 大模型训练的 MFU 与 Tensor 活跃度是同一个量级的东西：若 MFU 为 40%，Tensor 管线平均忙碌的比例也就在 40%–50% 附近。
# 写成一个「差距」：
#
# $$
# \Delta = \text{GPU\_UTIL} - \text{TENSOR\_ACTIVE}
# $$
#
# GPU 2 的 $\Delta$ 接近 100 个百分点：它是在**等**——这正是 XID 79 让 GPU 3 掉卡以后，同一作业里其他 rank 的样子。

# %%
monitoring_x.utilisation_gap_figure()

# %% [markdown]
# ### 2.1 把比例换回物理量，以及几个字段的陷阱
#
# DCGM 的 profiling 字段都是 0–1 的**周期比例**，乘以目录里的硬件上限，才变成能和模型对照的物理量。以样例里正常训练的 GPU 0、1 为例：

# %%
# NBVAL_CHECK_OUTPUT
h100 = hardware.gpu("H100-SXM")
for r in rows[:2]:
    print(f"GPU {r['gpu']}: tensor pipe {r['tensor_active']:.3f} x {h100.bf16_tflops:.1f} = "
          f"{r['tensor_active'] * h100.bf16_tflops:5.0f} TFLOPS (upper bound); "
          f"DRAM {r['dram_active']:.3f} x {h100.hbm_gbs} GB/s = {r['dram_active'] * h100.hbm_gbs:5.0f} GB/s; "
          f"power {r['power_w']:.0f} W = {100 * r['power_w'] / h100.tdp_w:.0f} % of {h100.tdp_w} W TDP")

# %% [markdown]
# 约 450 TFLOPS 的「上限」与第 8 章 40%–45% MFU 的训练吻合；之所以叫上限，是因为 `PIPE_TENSOR_ACTIVE` 统计的是 HMMA 管线**有指令在执行**的周期，
# 不保证每个周期都满吞吐，用 FP8 时峰值也要换成 FP8 的数。显存接口忙 38%、功耗在 TDP 的九成附近，说明这是一个计算密集、没有降频的健康状态。
#
# 几个字段的语义，新手几乎都会踩坑：
#
# - **`DCGM_FI_DEV_XID_ERRORS` 是 gauge，值是「最近一次 XID 的编号」**（HELP 文本：*Value of the last XID error encountered*），不是计数。
#   规则写成 `> 0` 只能发现「出过 XID」，看不出出了几次；新的 XID 会覆盖旧的，XID 79 之后再来一个 XID 13，面板上就只剩 13。
#   所以 XID 告警要配合内核日志（第 3 节的 `dmesg` 解析）一起看。dcgm-exporter 为此另有一个指标 `DCGM_EXP_XID_ERRORS_COUNT`：
#   按 `xid` 标签给出最近一个时间窗内每种 XID 的记录条数（窗口由 `--xid-count-window-size` 设定，默认 5 分钟）。它是滑动窗口里的条数，
#   窗口滑过后会回落，查询用 `max_over_time` 而不是 `increase`；它在官方 `default-counters.csv` 里是注释掉的，要用就得像第 6.1 节那样自己打开。
# - **`DCGM_FI_DEV_ECC_DBE_VOL_TOTAL` 是 counter，但 VOL（volatile）在驱动重载或 GPU 重置后清零**。所以 `VOL > 0` 的意思是
#   「自上次重置以来出过双比特错误」——本章第 4 节的 `GpuUncorrectableEcc` 就这样写，重置后告警自动解除，正好配合「隔离—重置—放回」的流程。
#   AGG（aggregate）字段跨重置一直累加，适合看长期趋势；对它告警要写 `increase(...[10m]) > 0`，否则一张卡一生中出过一次错就永远在报警。
# - **不支持的字段会返回「空白哨兵值」**：dcgm-exporter 官方 README 的示例输出里，`DCGM_FI_DEV_MEMORY_TEMP` 的值是 9223372036854775794——
#   那不是温度，而是 DCGM 的 `DCGM_INT64_NOT_SUPPORTED`（= `0x7ffffffffffffff2`，「这张卡不支持该字段」）。DCGM 把从
#   `DCGM_INT64_BLANK`（`0x7ffffffffffffff0` = 9223372036854775792）往上的几个值都留作「无数据」标记（未找到、不支持、无权限）。
#   一条「显存温度 > 95」的规则会对这样的卡永远报警，所以规则里要先过滤掉它们，例如加上 `< 9223372036854775792`。
# - **采集周期和抓取周期是两回事**：DCGM 文档说明，Prometheus 抓取并不会让 DCGM 去读硬件，抓取比 DCGM 的采集周期更频繁只会重复读到同一个缓存样本。
#   dcgm-exporter 自己的采集周期默认是 30 s（`-c` / `DCGM_EXPORTER_INTERVAL`，单位 ms，默认 30000），所以 Prometheus 每 15 s 抓一次时，
#   每个样本会被读到两次。检测延迟公式里的 $\Delta t$ 要取两者中较大的那个；想要 15 s 的分辨率，两边都要改。
# - **profiling 字段和性能分析器抢同一组硬件计数器**：节点上跑着采集 DCP 指标的 dcgm-exporter 时，Nsight Compute 等工具会拿不到计数器，
#   要先 `dcgmi profile --pause`，分析完再 `--resume`；有些 GPU 上多个 profiling 字段也不能同时采集，DCGM 会轮换采样，读数的噪声因此更大。
#
# ## 3. 硬件事件：XID 与 ECC
#
# 有些事件不需要阈值和统计，出现一次就要行动。NVIDIA 的 XID 文档与 GPU 显存错误管理文档给出了它们的含义（第 23 章已建了规则）：
#
# | 事件 | 指标 / 来源 | 含义 | 动作 |
# |---|---|---|---|
# | XID 79 | `DCGM_FI_DEV_XID_ERRORS == 79`、`dmesg` | GPU 从 PCIe 总线上掉了 | 立即隔离节点，断电重插或 RMA |
# | XID 48 / 94 / 95 | XID、`DCGM_FI_DEV_ECC_DBE_VOL_TOTAL` | 双比特（不可纠正）ECC；94 为已隔离、95 为未隔离 | 95：隔离并重置 GPU；94：重启作业，下次维护时重置 |
# | XID 63 / 64 | `DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS`、`DCGM_FI_DEV_ROW_REMAP_FAILURE` | 行重映射记录 / 失败 | 63：待重置生效；64：RMA |
# | XID 74 | XID、NVLink 计数器 | NVLink 错误 | 隔离节点，检查 NVLink/NVSwitch |
# | XID 119 / 120 | XID、`dmesg` | GSP（GPU 上的系统处理器固件）RPC 超时 / GSP 错误 | 隔离并重置 GPU；反复出现时对照驱动版本（第 19 章） |
#
# 下面用第 23 章的解析器读一段 `dmesg` 样例，并用 `reliability.triage_xid` 给出动作：

# %%
# NBVAL_CHECK_OUTPUT
events = parse_xid_errors(samples.sample("dmesg_xid"))
for t in reliability.triage_xid(events):
    print(f"{t['bus_id']:>14}  XID {t['xid']:3d}  isolate={str(t['isolate_node']):5}  {t['meaning']}")
q = parse_nvidia_smi_q(samples.sample("nvidia_smi_q"))
print("nvidia-smi -q memory actions:", [reliability.gpu_memory_action(g) for g in q.gpus])

# %% [markdown]
# ## 4. 告警规则与 `for:`：灵敏度是有代价的
#
# Prometheus 的告警规则由一个表达式和一个持续时间组成。每个求值周期 $\Delta t$（常用 15–30 s）计算一次表达式：
# 第一次为真时告警进入 **pending**，记下 $t_{\text{active}}$；之后只要每次求值都为真，当
#
# $$
# t - t_{\text{active}} \ge \texttt{for}
# $$
#
# 时告警转为 **firing**；中间任何一次为假，就回到未激活状态重新计时。于是一个在 $t_0$ 发生、信号在 $t_0 + \tau_{\text{cross}}$ 越过阈值的故障，
# 其检测延迟约为
#
# $$
# D \approx \tau_{\text{cross}}(k) + \texttt{for} + \Delta t_{\text{scrape}}/2,
# $$
#
# 其中 $\tau_{\text{cross}}$ 随阈值的灵敏度 $k$（阈值 = 健康基线 ± $k\sigma$，$\sigma$ 用 $1.4826\times$MAD 的稳健估计）增大而变长。
# 而误报来自健康信号偶然越过阈值，并且持续得比 `for:` 更久。降低 $k$ 或缩短 `for:` 会同时缩短 $D$ 和增加误报——这就是告警设计的基本权衡。
#
# 下面的探索器用一段合成遥测（64 张卡、6 小时、每 15 s 抓取一次，种子固定；数值为示意）演示这一点。
# 三种注入故障：风扇失效导致的**过热降频**、**XID 79 掉卡**（其余 rank 挂在 NCCL 里）、**一条网卡轨道降到 1/4 速率**。
# 每 30 分钟一次的同步检查点会让所有卡停 60 s——这是生产中最常见的误报来源之一。拖动阈值和 `for:`，看检测延迟和误报怎么变。

# %%
explorer = monitoring_x.alert_rule_explorer()
explorer

# %% [markdown]
# 把探索器里几个典型的设置列出来（每个数字都由规则引擎对同一段遥测计算）：

# %%
# NBVAL_CHECK_OUTPUT
for fault, k, for_s in [("thermal_throttle", 1.5, 0), ("thermal_throttle", 3, 120), ("thermal_throttle", 5, 600),
                        ("xid79", 5, 0), ("xid79", 5, 120), ("slow_nic", 3, 60), ("slow_nic", 3, 120)]:
    tel = monitoring_x.telemetry(fault)
    rule = monitoring.watched_rule(tel, k, for_s)
    s = monitoring.score_alerts(tel, rule)
    delay = f"{s.detection_delay_s / 60:5.1f} min" if s.detected else "  missed "
    print(f"{fault:16s} k={k:<4g} for={monitoring.format_duration(for_s):>4}  {rule.expr:45s} "
          f"delay {delay}  false positives {s.false_positives:4d}")

# %% [markdown]
# 读这张表：
#
# - 过热场景下 $k=1.5$、`for: 0s` 的规则比 $k=3$、`for: 2m` 早发现约 5 分钟，却在 6 小时里对 64 张卡报了近 700 次假警——
#   值班的人一周后就会把这条告警静音，真正的故障也就没人看了。
# - 检查点停顿持续 60 s：任何 `for:` 短于 60 s 的「Tensor 空闲」规则都会在每次检查点对每张卡报警（5 次 × 64 卡 = 320 次）；
#   `for: 2m` 把误报降为 0，代价是 XID 79 的挂死要 2 分钟后才被发现。对 XID 79 本身则应该用 `DCGM_FI_DEV_XID_ERRORS == 79` 这种
#   「出现即告警」的规则，它没有统计误报的问题。
# - 慢网卡让每个 rank 的步长都变长：这是一个**作业级**症状，每张卡的 GPU 指标都差不多，定位要靠第 23 章的 IB 计数器和链路速率。
#
# 下图把不同 `for:` 下、$k$ 从 1.5 到 6 的所有规则画在「检测延迟—误报」平面上（误报加 0.5 以便在对数轴上显示 0）：

# %%
monitoring_x.alert_tradeoff_figure("thermal_throttle")

# %% [markdown]
# 从规则对象直接生成 Prometheus 规则文件（下面是 prometheus-operator 的 `PrometheusRule` 形式，可以 `kubectl apply -f`；
# 它由 `labutil.manifests.prometheus_rule` 生成，课程测试按 prometheus-operator 仓库里 `PrometheusRule` 的 CRD schema 校验它，
# 并确认它的 `spec` 就是 4.1 节交给 `promtool` 的那个规则文件）。温度阈值取 `nvidia-smi -q` 样例里的降频温度（GPU Slowdown Temp）减 5 °C：

# %%
slow_c = q.gpus[0].slowdown_temp_c
print(manifests.to_yaml(manifests.prometheus_rule(monitoring.default_rules(slow_c))))

# %% [markdown]
# 第五条规则 `DcgmExporterDown` 看的是 Prometheus 自己为每个抓取目标写的 `up` 序列：dcgm-exporter 崩溃或节点失联时，
# 前四条规则的指标**一起消失**，它们永远不会触发，只有这一条会响（4.2 节第 4 条）。
#
# ### 4.1 规则也要有单元测试：`promtool`
#
# 上面这段 YAML 不只是给人看的。课程把同一组规则存成真实的 Prometheus 规则文件，并为**每一条**规则写了单元测试，
# 用 Prometheus 自带的 `promtool` 检查（Prometheus 文档「Unit testing for rules」）。测试里的输入序列是一串按抓取间隔排好的值，
# 期望结果是「在第几秒、哪张卡的告警处于 firing」；每条规则都有会触发的情形、不该触发的情形，以及**漏抓**或**序列不存在**的情形。
# 漏抓的语义值得单独记住：一次抓取失败时，Prometheus 会给上一次抓到的所有序列写入「陈旧标记」（staleness marker），
# 下一次成功抓取之前，这些序列在查询里**不存在**——对规则来说这和「条件为假」一样，`for:` 的计时从头开始。
# 本章的规则引擎 `monitoring.evaluate_rule` 把缺失的样本（NaN）按同样的语义处理。下面逐条列出这些测试，以及规则引擎在同样时刻算出的结果：

# %%
# NBVAL_CHECK_OUTPUT
for sc in promrules.rule_scenarios(slow_c):
    ok = promrules.scenario_firing(sc) == sc.expect
    exp = "; ".join(f"{monitoring.format_duration(t)}:{'fire' if idx else '-'}" for t, idx in sc.expect)
    print(f"{sc.alert:20s} {'agrees' if ok else 'DIFFERS'}  {exp:30s} {sc.name}")

# %% [markdown]
# 规则文件和测试文件随课程一起发布（`labutil/data/prometheus/`），在装有 Prometheus 的机器上（Debian/Ubuntu：`apt-get install prometheus`，
# 只用到其中的 `promtool`）这样检查：
#
# ```bash
# cd "$(python -c 'from labutil import promrules; print(promrules.prometheus_artefact_path().parent)')"
# promtool check rules gpu-health-rules.yml          # 语法与 PromQL：SUCCESS: 5 rules found
# promtool test rules gpu-health-rules.test.yml      # 每条规则的单元测试：SUCCESS
# curl -s localhost:9400/metrics | promtool check metrics   # 抓到的指标能否被 Prometheus 解析
# ```
#
# 课程的测试套件（`tests/test_promtool.py`）在 CI 里用 Debian 的 promtool 2.42 跑这三条命令，还做两件事：在随机生成、带漏抓的序列上逐个时刻比较
# `promtool test rules` 与 `evaluate_rule` 的结论（300 个求值时刻全部一致）；再故意把一个期望改错，确认 promtool 报 FAILED——证明这个检查真的在检查。
# `promtool check metrics` 对第 2 节的样例只报两类「风格」问题：标签名用了驼峰（`modelName`、`Hostname`、`UUID`）、counter 名字没有 `_total` 后缀。
# 这两点都是 dcgm-exporter 真实输出的特征，不是错误；但它提醒你，有些客户端库（例如 Python 的 `prometheus_client` 解析器）会自作主张地
# 把 counter 改名成 `..._total`，写规则时要以 `curl` 看到的名字为准。
#
# 把规则当代码对待：改阈值、改 `for:` 之前先改测试，让 CI 里的 `promtool test rules` 先红后绿，再 `kubectl apply`。

# %% [markdown]
# ### 4.2 告警设计：按值班的人能承受的量来设计
#
# 规则写得出来只是第一步。一套能长期活下去的告警体系，在有经验的团队里大致遵循这几条：
#
# 1. **只对需要人行动的事情发通知**。每条会叫醒人的告警都要附一份处置手册（runbook）：看什么、做什么、何时升级。
#    没有处置动作的指标（比如「某卡温度比昨天高 3 °C」）进仪表盘，不进通知。
# 2. **分级路由**。critical（XID 79、双比特 ECC、作业挂死）直接呼叫值班；warning（降频、慢卡、单条链路错误计数上升）生成工单，白天处理；
#    info 只记录。Alertmanager 按 `severity` 标签路由。
# 3. **分组与抑制**。一台节点掉电，它的 8 张卡、8 个网口、node-exporter 会同时报几十条告警；Alertmanager 按 `Hostname` 分组、
#    用「节点宕机」抑制（inhibit）同一节点上的 GPU 告警，值班的人只收到一条。
# 4. **监控监控系统本身**。dcgm-exporter 进程崩溃时，这台节点的所有 GPU 指标一起消失，所有阈值规则都不会再触发——最危险的告警是那条不响的告警。
#    必须有 `up{job="dcgm-exporter"} == 0`（本章的 `DcgmExporterDown`）或 `absent(...)` 这类规则，把「没有数据」当成故障。
#    两者分工不同：`up == 0` 抓「目标还在、但抓不到」；目标被服务发现删掉以后连 `up` 序列都没有了，只有 `absent()` 能发现——4.1 节的单元测试里两种情形都有。
#
# 规模也决定了监控系统本身要多大。每个抓取到的样本都要存下来，Prometheus 文档给出的经验值是平均每个样本 1–2 字节：

# %%
# NBVAL_CHECK_OUTPUT
n_nodes, gpus = 1024, hardware.server("DGX-H100").gpus
fields = len(monitoring.DCGM_FIELDS)
series = n_nodes * gpus * fields
for scrape_s in (15, 30):
    per_s = series / scrape_s
    print(f"{n_nodes} nodes x {gpus} GPUs x {fields} DCGM fields = {series:,} series; scrape {scrape_s:2d} s: "
          f"{per_s:,.0f} samples/s, {per_s * 86400 * 2 / 1e9:.1f} GB/day at 2 B/sample")

# %% [markdown]
# 只算 12 个 GPU 字段就有近十万条时间序列；再加上节点、网卡、交换机、作业指标，通常要乘上几倍。每天一两 GB、乘上几倍也只是几 GB，本身不多，
# 但保留一年的原始精度、以及在几十万条序列上求 `quantile` 的查询，都会把单台 Prometheus 压垮——这就是为什么大集群会按机房分片抓取，
# 再用 Thanos、VictoriaMetrics 之类的系统做长期存储和降采样。
#
# 公开的大规模训练报告都把「可观测性」放在和性能优化同等的位置。字节跳动的 MegaScale（NSDI 2024）在 12,288 张 GPU 上训练 175B 模型达到 55.2% MFU，
# 论文用相当篇幅讲它的诊断工具：用 CUDA event 给每个 rank 的每段计算和通信计时，汇总成按 3D 并行坐标排布的热力图，几分钟内定位慢卡和挂死的 rank。
# Meta 在 Llama 3 论文（§3.3.4）里报告了两个只有在全局监控里才看得见的现象：训练吞吐有 1%–2% 的昼夜波动，来自白天较高的环境温度；
# 上万张卡同时进入或退出同步等待时，数据中心的功耗会在几十兆瓦的量级上同步摆动，这对供电系统本身就是一个挑战。
# 这两件事没有任何一张卡「坏了」，只有把所有卡的功耗和步长放在一张图上才看得出来。
#
# ## 5. 慢卡（straggler）：同步训练跑在最慢的那张卡上
#
# 数据并行的每一步都以一次梯度 all-reduce 收尾，所有 rank 都要等最慢的那个进入集合通信：
#
# $$
# T_{\text{step}} = \max_i t_{\text{compute},i} + t_{\text{comm}}.
# $$
#
# 若计算占健康步长的比例为 $f$，一张卡慢了 $s$ 倍，则步长变为 $1 + (s-1)f$ 倍，吞吐损失
#
# $$
# L = 1 - \frac{1}{1 + (s-1)f}.
# $$
#
# 注意 $L$ 与慢卡数量无关：一张慢卡和一半慢卡，代价一样。检测也不能靠步长（所有 rank 的步长相同），要看**每个 rank 进入
# all-reduce 之前的计算时间**，在 rank 之间做稳健的离群检测。我们用修正 z 分数（Iglewicz & Hoaglin）：
#
# $$
# M_r = \frac{0.6745\,(x_r - \tilde{x})}{\text{MAD}}, \qquad \text{MAD} = \operatorname{median}_r |x_r - \tilde{x}|,
# $$
#
# $x_r$ 是 rank $r$ 最近 20 步计算时间的滑动平均，$M_r > 3.5$ 判为慢卡。中位数和 MAD 不会被慢卡本身拉偏，这是它优于均值加标准差的原因。

# %%
# NBVAL_CHECK_OUTPUT
tel = monitoring_x.telemetry("thermal_throttle")
rep = monitoring.detect_stragglers(tel.compute_s[:, ::4])        # one step per minute
print(f"injected: rank {tel.faulty_gpu}; flagged now: {rep.ranks}; first flagged "
      f"{rep.first_flag_step[tel.faulty_gpu] - int(tel.onset_s // 60)} min after the fan failure; "
      f"slowdown {rep.slowdown[tel.faulty_gpu, -1]:.2f}x")
loss = monitoring.straggler_throughput_loss(1.10, 1024)
print(f"one GPU 10% slow out of 1024: throughput -{loss['loss_fraction']:.2%} = {loss['gpus_equivalent_lost']:.0f} GPUs idle")

# %%
monitoring_x.straggler_figure()

# %% [markdown]
# ## 6. 实操命令
#
# 以下命令在装有 DCGM 的 GPU 节点上运行（本课程环境没有 GPU，这里只展示命令；dcgm-exporter 的输出已在第 2 节解析）：
#
# ```bash
# dcgmi discovery -l                      # DCGM 看到的 GPU、NVSwitch 列表
# dcgmi dmon -e 203,1001,1002,1004,1005 -d 1000   # 每秒：GPU_UTIL(203)、GR_ENGINE/SM_ACTIVE/TENSOR/DRAM_ACTIVE(1001-1005)
# dcgmi diag -r 2                         # 中等强度诊断（第 23 章解析其输出）
# curl -s localhost:9400/metrics | grep -E '^DCGM_FI_(DEV_GPU_UTIL|PROF_PIPE_TENSOR_ACTIVE|DEV_XID_ERRORS)'
# nvidia-smi -q -d ECC,ROW_REMAPPER      # ECC 计数与行重映射（A100/H100；V100 等更早的卡用 PAGE_RETIREMENT）
# sudo dmesg -T | grep -i xid             # 内核日志中的 XID 事件
# kubectl apply -f gpu-health-prometheusrule.yaml  # 第 4 节生成的 PrometheusRule（prometheus-operator）
# ```
#
# ### 6.1 dcgm-exporter 默认导出什么：规则依赖的字段可能根本不存在
#
# dcgm-exporter 只导出计数器 CSV 里**没被注释掉**的字段（每行 `DCGM 字段, Prometheus 类型, HELP`，`#` 开头为注释）。
# 用哪份 CSV 取决于安装方式：单独运行的二进制、systemd 服务和它自己的 Helm chart 默认读 `/etc/dcgm-exporter/default-counters.csv`
# （`-f` 参数或环境变量 `DCGM_EXPORTER_COLLECTORS`）；GPU Operator 部署的 dcgm-exporter 默认读 `dcp-metrics-included.csv`。
# 课程把这两份官方文件（NVIDIA/dcgm-exporter 仓库 2026-05-12 的版本）原样附在 `labutil/data/dcgm_exporter/upstream/` 里，
# 下面直接解析它们，看本章每条告警规则依赖的字段在哪份文件里是打开的：

# %%
# NBVAL_CHECK_OUTPUT
lists = list(monitoring.DCGM_COUNTER_LISTS)
print(f"{'alert / field':48s} " + " ".join(f"{n:>20s}" for n in lists))
for r in monitoring.rule_metric_coverage(monitoring.default_rules(slow_c)):
    print(f"{r['alert'] + ' (' + r['metric'].removeprefix('DCGM_FI_') + ')':48s} "
          + " ".join(f"{'on' if r[n] else 'OFF':>20s}" for n in lists))
for f in ("DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_SM_OCCUPANCY", "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL"):
    print(f"{'(chapter) ' + f.removeprefix('DCGM_FI_'):48s} "
          + " ".join(f"{'on' if f in monitoring.enabled_metrics(n) else 'OFF':>20s}" for n in lists))
print("enabled metrics per list:", {n: len(monitoring.enabled_metrics(n)) for n in lists})

# %% [markdown]
# 三个结论，都和直觉相反：
#
# - **`GpuUncorrectableEcc` 在默认安装下永远不会触发。** 它依赖的 `DCGM_FI_DEV_ECC_DBE_VOL_TOTAL` 在两份官方文件里都是注释掉的，
#   Prometheus 里根本没有这条序列；规则语法正确、`promtool` 也通过，但它守着一个空集合（4.1 节单元测试里「ECC field not in the exporter's CSV」那一条）。
#   一张卡真的出了双比特 ECC 错误，这条 critical 告警一声不响。
# - **`SM_ACTIVE` 和 `SM_OCCUPANCY` 在两份文件里也都是注释掉的**，连名字里带 DCP 的 `dcp-metrics-included.csv` 也一样；维护者在 dcgm-exporter issue #400 里的解释是
#   这两个指标开销很低，关掉主要是怕用户误读。第 2 节的「利用率差距」要用到它，必须自己打开。
# - `PIPE_TENSOR_ACTIVE`、`DRAM_ACTIVE`、`GR_ENGINE_ACTIVE` 两份文件默认都是开的，所以 `TrainingTensorIdle` 开箱即用。
#
# 怎么打开：课程附带一份 `labutil/data/dcgm_exporter/course-counters.csv`，它就是官方的 `dcp-metrics-included.csv` 去掉了 11 行注释符
# （SM_ACTIVE、SM_OCCUPANCY、三个 ECC 计数、两个降频时长计数、四个 NVLink 错误计数），文件头写明了每一处改动和原因；
# 课程的测试会检查本章每条规则、每个章节里提到的 DCGM 字段都在这份文件里打开。部署方式：
#
# ```bash
# dcgm-exporter -f /etc/dcgm-exporter/course-counters.csv          # 二进制 / systemd：-f 或 DCGM_EXPORTER_COLLECTORS
# # GPU Operator：放进 gpu-operator 命名空间的 ConfigMap（键名必须是 dcgm-metrics.csv），再在 ClusterPolicy 里引用它；
# # 课程附带的 labutil/data/k8s/ch26-monitoring.yaml 里就是这个 ConfigMap（manifests.dcgm_metrics_configmap()）和上面的 PrometheusRule
# kubectl create configmap course-dcgm-metrics -n gpu-operator --from-file=dcgm-metrics.csv=course-counters.csv
# helm upgrade gpu-operator nvidia/gpu-operator -n gpu-operator --reuse-values --set dcgmExporter.config.name=course-dcgm-metrics
# curl -s localhost:9400/metrics | grep -c '^DCGM_FI_DEV_ECC_DBE_VOL_TOTAL'   # 每张卡一行才算生效
# ```
#
# 两个常见的「打开了却没有」：DCP（`DCGM_FI_PROF_*`）字段需要数据中心级 GPU 和 DCGM 的 profiling 模块，条件不满足时 dcgm-exporter 只在日志里写一行
# `Skipping line N ('DCGM_FI_PROF_...'): metric not enabled`，其余字段照常导出；另外 CSV 必须正好三列，HELP 里出现逗号要整体加引号，否则进程直接拒绝启动。
# 所以上线一条新规则的检查单是：规则有单元测试（4.1 节）→ 规则依赖的字段在 CSV 里打开 → `curl` 确认序列真的存在。
#
# ### 6.2 GPU 之外的两块拼图：网卡计数器和「这张卡属于哪个作业」
#
# 第 4 节的慢网卡场景说明，很多训练故障在 GPU 指标上看不出来。InfiniBand 端口计数器由 node-exporter 的 `infiniband` 采集器
# （默认开启，读 `/sys/class/infiniband`）导出，每个指标带 `device`、`port` 标签。值得写规则的几条（名字取自 node_exporter
# `collector/infiniband_linux.go`）：
#
# | 指标 | 含义 | 规则思路 |
# |---|---|---|
# | `node_infiniband_state_id` | 端口逻辑状态（4 = Active） | `!= 4` 持续 1 分钟：链路掉了，NCCL 要么退回别的网卡，要么挂住 |
# | `node_infiniband_rate_bytes_per_second` | 协商速率 | 低于同型号端口的额定值：降速协商（第 23 章的 `ibstat` Rate） |
# | `node_infiniband_link_downed_total` | 链路从错误状态恢复失败、掉线的次数 | `increase(...[10m]) > 0` |
# | `node_infiniband_port_errors_received_total` | 收到的坏包数 | 与同一交换机上其他端口比，持续增长的那条线缆先换 |
# | `node_infiniband_port_transmit_wait_total` | 有数据要发却发不出去的 tick 数 | 拥塞的信号；单位是硬件 tick，只适合和自己的历史、和同类端口比 |
#
# 另一块是「卡 → 作业」的映射。Kubernetes 上 dcgm-exporter 从 kubelet 的 pod-resources 接口拿到 `pod`、`namespace` 标签；Slurm 集群没有这个接口，
# dcgm-exporter 提供 `--hpc-job-mapping-dir`（或 `DCGM_HPC_JOB_MAPPING_DIR`）：目录里每个文件以 GPU 编号命名，内容是正在这张卡上运行的作业号，
# 通常由 Slurm 的 prolog 写入、epilog 删除；此后每条指标都多一个 `hpc_job` 标签，慢卡告警就能直接说出是哪个作业、该通知谁。
#
# ## 7. 常见误区
#
# ### 误区一：「GPU 利用率 100% 就说明算力吃满了」
#
# 用第 2 节的样例算：

# %%
# NBVAL_CHECK_OUTPUT
for r in rows[:3]:
    g = monitoring.utilisation_gap(r)
    print(f"GPU {r['gpu']}: GPU_UTIL {g['util']:.0%}, SM_ACTIVE {g['sm_active']:.1%}, TENSOR_ACTIVE {g['tensor_active']:.1%}"
          f" -> {g['util_minus_tensor'] * 100:.1f} points of '100 %' were not tensor work")

# %% [markdown]
# 三张卡的 GPU_UTIL 都是 100%；正常训练的卡只有约 45% 的周期在用 Tensor Core，挂在 NCCL 上的 GPU 2 几乎为 0。
# 按 GPU_UTIL 做容量报表，会把一个挂死的作业记成「满载」。
#
# ### 误区二：「告警阈值越灵敏越好」

# %%
# NBVAL_CHECK_OUTPUT
tel = monitoring_x.telemetry("thermal_throttle")
for k, for_s in [(1.5, 0), (3, 120)]:
    s = monitoring.score_alerts(tel, monitoring.watched_rule(tel, k, for_s))
    print(f"k={k:g}, for={monitoring.format_duration(for_s)}: delay {s.detection_delay_s / 60:.1f} min, "
          f"{s.false_positives} false positives = {s.false_positives_per_1000_gpu_days(tel.n_gpus, 6 * 3600):.0f} per 1000 GPU-days")

# %% [markdown]
# 灵敏的规则早几分钟发现过热，换算到 1,000 卡每天是四万多条假警。过热降频的代价按分钟计，而告警疲劳的代价是值班制度失效。
# 正确的做法是反过来定阈值：先问「晚发现几分钟要花多少钱」（过热降频几分钟，损失的是一张卡几分钟的吞吐，第 5 节的慢卡公式可以算），再问「值班的人一周最多能认真处理几条告警」（多数团队的经验是每个班次个位数），在这个预算之内选最灵敏的 $k$ 与 `for:`。真正按秒计价的故障——XID 79、作业挂死——不靠统计阈值，而是靠「出现即告警」的事件规则和作业层心跳，它们几乎没有误报。
#
# ### 误区三：「单卡慢一点无所谓」

# %%
# NBVAL_CHECK_OUTPUT
usd_h = cost.cloud_usd_per_gpu_hour("H100-SXM")
for s_ in (1.05, 1.10, 1.25):
    r = monitoring.straggler_throughput_loss(s_, 1024)
    print(f"1 of 1024 GPUs {s_ - 1:.0%} slow: job -{r['loss_fraction']:.1%}, = {r['gpus_equivalent_lost']:.0f} GPUs, "
          f"{r['gpus_equivalent_lost'] * usd_h * 24:,.0f} USD/day at {usd_h} USD/GPU-h")

# %% [markdown]
# 一张慢 10% 的卡让 1,024 卡作业损失约 93 张卡的吞吐，按 2024-12 AWS Capacity Blocks（US East）示意价格 4.916 USD/GPU·h
# （p5.48xlarge 的每 GPU 小时价，`labutil/data/prices.toml` 记着日期与出处；按需、竞价和别家云的价格都不同，换成你自己的单价重算即可）
# 每天约一万一千美元——远超这张卡本身一天的租金。
# 这就是为什么大规模训练平台都把慢卡检测和自动驱逐做进调度系统。挂死的代价更直接：XID 79 让整个作业停在 NCCL 里，
# 直到 PyTorch 的 NCCL 超时（`init_process_group` 的 `timeout`，文档给出的 NCCL 默认值为 10 分钟）：

# %%
# NBVAL_CHECK_OUTPUT
print(f"1024 H100 idle for 10 min: {monitoring.hang_cost_usd(1024, 600, usd_h):,.0f} USD "
      f"(plus the work since the last checkpoint)")

# %% [markdown]
# ## 8. 练习
#
# 把答案填进 `answer_k`，运行单元格查看判分；卡住时调用 `exercise("ch26.k").hint(1)`。
#
# **练习 1**：1,024 卡同步数据并行（计算占步长 100%），一张卡慢了 10%，相当于损失多少张卡的吞吐？（等效张数，可带小数）

# %%
answer_1 = None
exercise("ch26.1").check(answer_1)

# %% [markdown]
# **练习 2**：解析 `monitoring.DCGM_EXPORTER_SAMPLE`，GPU 0 的 GPU_UTIL（%）减去 TENSOR_ACTIVE（换算成 %）是多少个百分点？

# %%
answer_2 = None
exercise("ch26.2").check(answer_2)

# %% [markdown]
# **练习 3**：规则 `DCGM_FI_DEV_GPU_TEMP > 85`、`for: 2m`，每 15 s 求值一次；温度在 t = 600 s 从 65 °C 跳到 90 °C 并保持。告警在第几秒首次 firing？

# %%
answer_3 = None
exercise("ch26.3").check(answer_3)

# %% [markdown]
# **练习 4**：XID 79 让 1,024 张 H100 的作业挂住 10 分钟直到 NCCL 超时，按 2024-12 AWS Capacity Blocks（US East）示意价格
# 4.916 USD/GPU·h（`cost.cloud_usd_per_gpu_hour("H100-SXM")`），这 10 分钟值多少美元？

# %%
answer_4 = None
exercise("ch26.4").check(answer_4)

# %% [markdown]
# **练习 5（判断题）**：`DCGM_FI_DEV_GPU_TEMP` 在 t = 600 s 从 65 °C 跳到 90 °C，t = 700 s 回落；规则 `temp > 85 for: 1m` 和 `temp > 85 for: 2m` 从 t = 0 起每 15 s 评估一次。哪条会触发：'1m'、'2m'、'both' 还是 'neither'？

# %%
answer_5 = None  # '1m' / '2m' / 'both' / 'neither'
exercise("ch26.5").check(answer_5)

# %% [markdown]
# ## 9. 小结
#
# - 监控栈 = DCGM 采集 + dcgm-exporter 暴露 + Prometheus 规则 + Alertmanager 通知，外加作业层的步长与每 rank 计算时间。
# - GPU_UTIL 只说明「有 kernel 在跑」；看 SM_ACTIVE / PIPE_TENSOR_ACTIVE 才知道算力是否在被使用。
# - XID 79、95、64 等硬件事件「出现即告警、立即隔离」；统计型告警要在检测延迟与误报之间用 $k$ 与 `for:` 权衡。
# - 同步训练跑在最慢的卡上：一张 10% 慢卡 ≈ 千卡作业丢掉 9% 吞吐；用 MAD 修正 z 分数在 rank 之间找它。
# - 读字段先读定义：XID_ERRORS 是「最近一次的编号」、VOL 计数会在重置后清零、不支持的字段返回哨兵值；把比例乘以目录上限才能和模型对照。
# - 告警按值班能承受的量设计：分级路由、分组与抑制、每条告警有处置手册，并且要监控「监控本身是否还在」（`up == 0` 与 `absent()`）。
# - 规则是代码：`promtool check rules` 查语法，`promtool test rules` 为每条规则写「该响、不该响、漏抓、序列不存在」的单元测试；漏抓等于一次「条件为假」，会重置 `for:`。
# - 规则依赖的字段要真的被导出：两份官方 dcgm-exporter CSV 都没打开 `SM_ACTIVE` 和 `ECC_DBE_VOL_TOTAL`，默认安装下 ECC 告警永远不会响；用课程的 `course-counters.csv` 或自己的 CSV 打开它们。
#
# ## 参考资料
#
# - NVIDIA DCGM 文档 *Configure Prometheus for DCGM Exporter*（抓取不会触发 DCGM 读硬件；采集与抓取周期要对齐；示例 `scrape_interval: 30s`）；NVIDIA/dcgm-exporter README（示例输出中的空白哨兵值 9223372036854775794）；DCGM 文档 *Profiling*（`dcgmi profile --pause/--resume`）。
# - Prometheus 文档 *Storage*（平均每个样本 1–2 字节）；Alertmanager 文档（grouping、inhibition、routing）。
# - Z. Jiang et al. (ByteDance), *MegaScale: Scaling Large Language Model Training to More Than 10,000 GPUs*, NSDI 2024（12,288 GPU、55.2% MFU；CUDA event 计时与诊断工具）。
# - A. Grattafiori et al. (Meta), *The Llama 3 Herd of Models*, arXiv:2407.21783, §3.3.4（1%–2% 昼夜吞吐波动；数据中心功耗几十兆瓦量级的同步摆动）。
# - NVIDIA/dcgm-exporter：`etc/default-counters.csv`、`etc/dcp-metrics-included.csv`，commit d5e5f510a1b6（2026-05-12），原样附于 `labutil/data/dcgm_exporter/upstream/`（指标名、类型、HELP 文本与默认开关）；`pkg/cmd/app.go`（`-f` / `DCGM_EXPORTER_COLLECTORS` 默认 `default-counters.csv`）；`internal/pkg/counters/counter_config.go`（CSV 读取规则、`metric not enabled`）；PR #655（`Hostname` 标签改为 `hostname`，4.5.3-4.8.2 之后）；NVIDIA DCGM-Exporter 文档（输出示例与标签，默认端口 9400）。
# - NVIDIA/dcgm-exporter issue #400（SM_ACTIVE / SM_OCCUPANCY 默认关闭：开销很低，关闭是因为容易被误读）。
# - NVIDIA/dcgm-exporter `pkg/cmd/app.go`（commit 0048f87c83c6）：`-c`/`DCGM_EXPORTER_INTERVAL` 默认 30000 ms；`--xid-count-window-size` 默认 5 分钟（`DCGM_EXP_XID_ERRORS_COUNT`）；`--hpc-job-mapping-dir`（README「HPC job mapping」：每个文件以 GPU 编号命名、内容为作业号，指标加 `hpc_job` 标签）。
# - NVIDIA DCGM `dcgm_structs.h` / `dcgmvalue.py`：`DCGM_INT64_BLANK = 0x7ffffffffffffff0`，`DCGM_INT64_NOT_FOUND`、`NOT_SUPPORTED`、`NOT_PERMISSIONED` 依次为 BLANK+1、+2、+3。
# - prometheus/node_exporter `collector/infiniband_linux.go`（commit 043fecbfd8f0）：`node_infiniband_*` 指标名与含义，`infiniband` 采集器默认开启。
# - NVIDIA/gpu-operator（commit a22dbf671f2e，2026-08-21）：`assets/state-dcgm-exporter/0800_daemonset.yaml`（默认 `DCGM_EXPORTER_COLLECTORS=/etc/dcgm-exporter/dcp-metrics-included.csv`）、`deployments/gpu-operator/values.yaml`（`dcgmExporter.config.name`，ConfigMap 键 `dcgm-metrics.csv`）。
# - Prometheus 文档：*Unit testing for rules*（`promtool test rules` 的文件格式）、*Querying basics* 中的 Staleness；B. Brazil, *Staleness and PromQL*, Robust Perception（抓取失败时该目标的所有序列被标为陈旧）。课程用 Debian 12 的 `prometheus` 2.42.0 软件包中的 promtool 测试。
# - NVIDIA DCGM User Guide：Field IDs 与 Profiling Metrics（`SM_ACTIVE`、`PIPE_TENSOR_ACTIVE`、`DRAM_ACTIVE` 的定义）；`dcgmi dmon`、`dcgmi diag`。
# - NVML API Reference：`nvmlDeviceGetUtilizationRates`（GPU 利用率 = 有 kernel 运行的时间比例）。
# - Prometheus 文档：Exposition formats（文本格式 0.0.4）；Alerting rules（`for:` 的 pending/firing 语义）。prometheus-operator API：`PrometheusRule`（monitoring.coreos.com/v1）。
# - NVIDIA「XID Errors」与「GPU Memory Error Management」文档（XID 48/63/64/74/79/94/95/119/120，行重映射）。
# - B. Iglewicz, D. Hoaglin, *How to Detect and Handle Outliers*, ASQC, 1993（修正 z 分数与 3.5 阈值）。
# - PyTorch 文档：`torch.distributed.init_process_group` 的 `timeout`（NCCL 默认 10 分钟）。
# - AWS「Amazon EC2 Capacity Blocks for ML Pricing」：p5.48xlarge（US East，N. Virginia）2024-12 的每 GPU 小时 4.916 USD，本章作示意价格使用（`labutil/data/prices.toml`）。
# - A. Grattafiori et al. (Meta), *The Llama 3 Herd of Models*, 2024, §3.3.4（中断统计，第 27 章）。
# - 课程种子材料：《大规模GPU集群部署核心概念速览》误区二（监控 Agent 部署是部署的必要环节）；《AI算力集群》课程导入误区三（只算采购成本、不算停机成本）。
